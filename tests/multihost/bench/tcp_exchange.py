"""Plain TCP, both ways at once: the kernel's floor for an exchange between
two hosts, beside UCX's (ucx_perftest) and xcomm's.

    tcp_exchange.py server ADDR PORT BYTES REPS   (on one host)
    tcp_exchange.py client ADDR PORT BYTES REPS   (on the other; prints)

Each side sends BYTES and receives BYTES over one connection at once (a
thread receives while the main thread sends), REPS times after one untimed
exchange; the client prints the median and best time of an exchange.
"""
import socket
import sys
import threading
import time


def main():
    mode, addr, port, nbytes, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    if mode == "server":
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((addr, port))
        listener.listen(1)
        sock, _ = listener.accept()
    else:
        deadline = time.monotonic() + 10
        while True:  # until the server listens
            try:
                sock = socket.create_connection((addr, port), timeout=10)
                break
            except ConnectionRefusedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out, into = bytearray(nbytes), memoryview(bytearray(nbytes))

    def receive():
        got = 0
        while got < nbytes:
            n = sock.recv_into(into[got:], nbytes - got)
            if n == 0:
                raise ConnectionError("peer closed the connection")
            got += n

    times = []
    for _ in range(reps + 1):
        start = time.perf_counter()
        reader = threading.Thread(target=receive)
        reader.start()
        sock.sendall(out)
        reader.join()
        sock.sendall(b"x")  # both sides done before the next exchange
        sock.recv(1)
        times.append((time.perf_counter() - start) * 1e3)
    if mode == "client":
        timed = sorted(times[1:])
        median = timed[len(timed) // 2]
        print(f"| tcp both ways | {nbytes:>9} | {reps:>6} | median {median:.1f} ms | best {timed[0]:.1f} ms "
              f"| {nbytes / median / 1e3:.0f} MB/s each way |")


if __name__ == "__main__":
    main()
