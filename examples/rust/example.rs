//! The tour every language's example takes: start, allreduce, pass a message
//! to the right-hand neighbour, split into two groups and reduce inside each.
//! It checks every result and exits 1 on a mismatch.
//!
//! Build and run (from bindings/rust, with a meson build in build/):
//!   XCOMM_LIB_DIR=$PWD/../../build/src cargo build --offline --example xcomm_example
//!   ../../build/src/tools/xcrun -n 4 target/debug/examples/xcomm_example

use xcomm::Op;

fn wrong(what: &str, got: i64, want: i64, rank: i32) -> usize {
    if got == want {
        return 0;
    }
    eprintln!("rank {rank}: {what} is {got}, expected {want}");
    1
}

fn main() -> xcomm::Result<()> {
    let world = xcomm::init()?; // freed (collectively) when it goes out of scope
    let (rank, size) = (world.rank(), world.size());
    let mut errors = 0;

    // 1. allreduce: the sum of all ranks.
    let mut sum = [rank as i64];
    world.allreduce_in_place(&mut sum, Op::Sum)?;
    errors += wrong(
        "sum of ranks",
        sum[0],
        size as i64 * (size as i64 - 1) / 2,
        rank,
    );

    // 2. send to the right, receive from the left, without blocking: the
    //    requests live in a scope, which borrows the buffers until it ends.
    let right = (rank + 1) % size;
    let left = (rank + size - 1) % size;
    let out = [100 + rank as i64];
    let mut inbox = [-1i64];
    let status = xcomm::scope(|s| {
        let recv = world.irecv(s, &mut inbox, left, 7)?;
        let send = world.isend(s, &out, right, 7)?;
        send.wait()?;
        recv.wait()
    })?;
    errors += wrong("message from the left", inbox[0], 100 + left as i64, rank);
    errors += wrong("its sender", status.source as i64, left as i64, rank);

    // 3. two groups, even and odd ranks, each reducing on its own.
    let half = world
        .split(rank % 2, rank)?
        .expect("every rank has a colour");
    let mut group_sum = [rank as i64];
    half.allreduce_in_place(&mut group_sum, Op::Sum)?;
    let want: i64 = (rank % 2..size).step_by(2).map(i64::from).sum();
    errors += wrong("sum in my group", group_sum[0], want, rank);

    println!(
        "rank {rank}/{size}: world sum {}, got {} from rank {left}, group {} (rank {}/{}) sum {}: {}",
        sum[0],
        inbox[0],
        rank % 2,
        half.rank(),
        half.size(),
        group_sum[0],
        if errors > 0 { "WRONG" } else { "ok" }
    );
    drop(half);
    drop(world);
    if errors > 0 {
        std::process::exit(1);
    }
    Ok(())
}
