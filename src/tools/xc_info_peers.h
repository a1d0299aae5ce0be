// xc-info --peers: the routes between a running job's ranks, per peer class.
#pragma once

// Joins the job of the launcher it runs under (xc_init) and prints, on rank
// 0, how frames travel between ranks on one host and between hosts. 0 on
// success; 1 with a message on stderr.
int print_peers();
