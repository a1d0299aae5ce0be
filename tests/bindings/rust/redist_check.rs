//! Redistribution from Rust under xcrun: a mesh Shard(0) -> Shard(1) move of
//! a 2-D array, checked against the values every rank computes (v = 100 * i
//! + j), plan info, a non-blocking run, relabelling of boxes shifted by one
//! rank, and a bad layout's error. Exit 0 when every check passed.
use xcomm::{Placement, Result};

fn chunk(n: usize, parts: usize, i: usize) -> (usize, usize) {
    let size = n.div_ceil(parts);
    let lo = (i * size).min(n);
    (lo, (lo + size).min(n))
}

fn run() -> Result<()> {
    let world = xcomm::init()?;
    let (rank, n) = (world.rank() as usize, world.size() as usize);
    let (rows, cols) = (7usize, 5usize);
    let src = world.layout_mesh(&[rows, cols], &[n as i32], &[Placement::Shard(0)])?;
    let dst = world.layout_mesh(&[rows, cols], &[n as i32], &[Placement::Shard(1)])?;
    let (r0, r1) = chunk(rows, n, rank);
    let (c0, c1) = chunk(cols, n, rank);
    let mine: Vec<f64> = (r0..r1).flat_map(|i| (0..cols).map(move |j| (100 * i + j) as f64)).collect();
    assert_eq!(mine.len(), src.local_count());
    let want: Vec<f64> = (0..rows).flat_map(|i| (c0..c1).map(move |j| (100 * i + j) as f64)).collect();
    let plan = world.redistribute_plan::<f64>(&src, &dst, false)?;
    let mut out = vec![-1.0; dst.local_count()];
    plan.run(&mine, &mut out)?;
    assert_eq!(out, want, "rank {rank}: Shard(0) -> Shard(1)");
    let info = plan.info()?;
    assert_eq!(info.bytes_received, info.lower_bound_bytes);
    assert!(n == 1 || info.step_kinds & xcomm::sys::XC_REDIST_STEP_ALLTOALL as u32 != 0, "an alltoall step");
    let mut again = vec![-1.0; dst.local_count()];
    xcomm::scope(|s| plan.start(s, &mine, &mut again)?.wait().map(drop))?;
    assert_eq!(again, want, "rank {rank}: non-blocking run");
    plan.free()?;

    // Boxes shifted by one rank: the relabelling undoes the shift.
    let (o, e): (Vec<[usize; 2]>, [usize; 2]) = ((0..n).map(|r| [4 * r, 0]).collect(), [4, 3]);
    let a: Vec<(&[usize], &[usize], i32)> = (0..n).map(|r| (&o[r][..], &e[..], r as i32)).collect();
    let b: Vec<(&[usize], &[usize], i32)> = (0..n).map(|r| (&o[r][..], &e[..], ((r + 1) % n) as i32)).collect();
    let (la, lb) = (world.layout_boxes(&[4 * n, 3], &a)?, world.layout_boxes(&[4 * n, 3], &b)?);
    let plan = world.redistribute_plan::<i32>(&la, &lb, true)?;
    let mine: Vec<i32> = (0..12).map(|k| (rank * 12 + k) as i32).collect();
    let mut out = vec![0; 12];
    plan.run(&mine, &mut out)?;
    let from = (rank + n - 1) % n;
    assert_eq!(out, (0..12).map(|k| (from * 12 + k) as i32).collect::<Vec<_>>());
    let (perm, _) = plan.relabel()?;
    assert_eq!(perm, (0..n).map(|j| ((j + n - 1) % n) as i32).collect::<Vec<_>>());
    drop(plan);

    // A gap: every rank gets the same error.
    let gap = world.layout_boxes(&[4, 4], &[(&[0, 0][..], &[2, 4][..], 0)]);
    let err = gap.err().expect("a layout with a gap must fail");
    assert_eq!(err.code, xcomm::sys::XC_ERR_INVALID_ARGUMENT);
    assert!(err.message.contains("gap"), "{}", err.message);
    if rank == 0 {
        println!("redist_check: ok on {n} ranks");
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("redist_check failed: {e}");
        std::process::exit(1);
    }
}
