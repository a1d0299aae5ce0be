//! Multi-rank checks of the Rust bindings: every operation of the `xcomm`
//! crate, checked against values each rank computes locally (every rank can
//! regenerate every other rank's seeded data). Run under the launcher,
//! `xcrun -n N target/debug/examples/mp_check`, by tests/bindings/rust/run.sh;
//! tests/world_of_one.rs of the xcomm crate runs the same checks in one
//! process (a world of one, without a launcher).
//!
//! Exit status: 0 when every check passed, 1 otherwise (each failure is
//! printed with the rank, the op and the first wrong element).
#![allow(dead_code)] // also compiled as a module of a test, where main is unused

use std::fmt::{Debug, Display};
use std::time::Instant;

use xcomm::{Comm, Config, Dtype, Memory, Op, Source, Tag, ThreadMode, UniqueId, BF16, F16};

pub fn main() {
    let start = Instant::now();
    // (init_with: the tests in one process, tests/world_of_one.rs, use init)
    let cfg = Config::new().name("rust-mp").timeout_ms(120_000);
    let world = match xcomm::init_with(&cfg) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("xcomm::init failed: {e}");
            std::process::exit(1);
        }
    };
    let (rank, size) = (world.rank(), world.size());
    match run(&world) {
        Ok(report) if report.failures == 0 => {
            if rank == 0 {
                println!(
                    "mp_check: {} checks passed on each of {size} ranks in {:.2?} ({} ops not in the library yet)",
                    report.checks,
                    start.elapsed(),
                    report.skipped
                );
            }
        }
        Ok(report) => {
            eprintln!(
                "rank {rank}: {} of {} checks FAILED",
                report.failures, report.checks
            );
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("rank {rank}: an xcomm call failed: {e}");
            std::process::exit(1);
        }
    }
}

/// What `run` found.
pub struct Report {
    pub checks: usize,
    pub failures: usize,
    /// Ops the library answered with XC_ERR_UNSUPPORTED (not built yet).
    pub skipped: usize,
}

struct Check {
    rank: i32,
    checks: usize,
    failures: usize,
    skipped: usize,
}

impl Check {
    /// Ok(true) when `r` succeeded; Ok(false), noted as skipped, when the
    /// library answered XC_ERR_UNSUPPORTED ("not built yet", on every rank
    /// alike); any other error goes on.
    fn ran(&mut self, what: impl Display, r: xcomm::Result<()>) -> xcomm::Result<bool> {
        match r {
            Ok(()) => Ok(true),
            Err(e) if e.code == xcomm::sys::XC_ERR_UNSUPPORTED => {
                if self.rank == 0 {
                    eprintln!("mp_check: SKIPPED {what}: {}", e.message);
                }
                self.skipped += 1;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
    fn ok(&mut self, cond: bool, what: impl Display) {
        self.checks += 1;
        if !cond {
            self.failures += 1;
            eprintln!("rank {}: FAILED: {what}", self.rank);
        }
    }
    fn eq<T: PartialEq + Debug>(&mut self, what: impl Display, got: T, want: T) {
        let ok = got == want;
        self.ok(ok, format_args!("{what}: got {got:?}, expected {want:?}"));
    }
    /// Element-wise, reporting the first difference.
    fn slices<T: PartialEq + Debug>(&mut self, what: impl Display, got: &[T], want: &[T]) {
        self.checks += 1;
        if got.len() != want.len() {
            self.failures += 1;
            eprintln!(
                "rank {}: FAILED: {what}: length {} instead of {}",
                self.rank,
                got.len(),
                want.len()
            );
        } else if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            self.failures += 1;
            eprintln!(
                "rank {}: FAILED: {what}: [{i}] is {:?}, expected {:?}",
                self.rank, got[i], want[i]
            );
        }
    }
}

// ---- seeded data that every rank can regenerate ----------------------------

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The bits of element `i` of `rank`'s data in case `seed`.
fn bits(seed: u64, rank: i32, i: usize) -> u64 {
    mix(mix(seed ^ ((rank as u64 + 1) << 48)) ^ i as u64)
}

/// A test element: how to make seeded values that reduce exactly, and the
/// reference reduction (over the ranks' values in rank order).
trait Elem: Dtype + PartialEq + Debug + Default {
    const NAME: &'static str;
    const INTEGER: bool;
    fn gen(bits: u64, op: Op) -> Self;
    fn expected(values: &[Self], op: Op) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const INTEGER: bool = true;
            fn gen(bits: u64, _op: Op) -> Self {
                bits as $t // full range: sums and products wrap
            }
            fn expected(v: &[Self], op: Op) -> Self {
                let mut acc = v[0];
                for &x in &v[1..] {
                    acc = match op {
                        Op::Sum | Op::Avg => acc.wrapping_add(x),
                        Op::Prod => acc.wrapping_mul(x),
                        Op::Min => acc.min(x),
                        Op::Max => acc.max(x),
                        Op::Band => acc & x,
                        Op::Bor => acc | x,
                        Op::Bxor => acc ^ x,
                    };
                }
                if op == Op::Avg { acc / v.len() as $t } else { acc }
            }
        }
    )*};
}
int_elem!(i8, u8, i32, u32, i64, u64);

/// Float values: small integers for sums (exact in any order), ±1/±2 for
/// products, eighths for min/max.
fn float_value(bits: u64, op: Op) -> f64 {
    match op {
        Op::Prod => [-2.0, -1.0, 1.0, 2.0][(bits % 4) as usize],
        Op::Min | Op::Max => ((bits % 2001) as i64 - 1000) as f64 / 8.0,
        _ => ((bits % 17) as i64 - 8) as f64,
    }
}

fn fold_float<T: Copy + PartialOrd + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(
    v: &[T],
    op: Op,
) -> T {
    let mut acc = v[0];
    for &x in &v[1..] {
        acc = match op {
            Op::Sum | Op::Avg => acc + x,
            Op::Prod => acc * x,
            Op::Min => {
                if x < acc {
                    x
                } else {
                    acc
                }
            }
            Op::Max => {
                if x > acc {
                    x
                } else {
                    acc
                }
            }
            _ => unreachable!("bitwise op on a float"),
        };
    }
    acc
}

impl Elem for f32 {
    const NAME: &'static str = "f32";
    const INTEGER: bool = false;
    fn gen(bits: u64, op: Op) -> Self {
        float_value(bits, op) as f32
    }
    fn expected(v: &[Self], op: Op) -> Self {
        let acc = fold_float(v, op);
        if op == Op::Avg {
            acc / v.len() as f32
        } else {
            acc
        }
    }
}
impl Elem for f64 {
    const NAME: &'static str = "f64";
    const INTEGER: bool = false;
    fn gen(bits: u64, op: Op) -> Self {
        float_value(bits, op)
    }
    fn expected(v: &[Self], op: Op) -> Self {
        let acc = fold_float(v, op);
        if op == Op::Avg {
            acc / v.len() as f64
        } else {
            acc
        }
    }
}
// Half types reduce in f32 and round once at the end (as the library does).
macro_rules! half_elem {
    ($($t:ident),*) => {$(
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const INTEGER: bool = false;
            fn gen(bits: u64, op: Op) -> Self {
                $t::from_f32(float_value(bits, op) as f32)
            }
            fn expected(v: &[Self], op: Op) -> Self {
                let wide: Vec<f32> = v.iter().map(|h| h.to_f32()).collect();
                let acc = fold_float(&wide, op);
                $t::from_f32(if op == Op::Avg { acc / v.len() as f32 } else { acc })
            }
        }
    )*};
}
half_elem!(F16, BF16);

fn data<T: Elem>(seed: u64, rank: i32, n: usize, op: Op) -> Vec<T> {
    (0..n).map(|i| T::gen(bits(seed, rank, i), op)).collect()
}

// ---- the checks --------------------------------------------------------------

/// Counts around both allreduce algorithms (recursive doubling below 64 KiB,
/// ring above) and below the number of ranks.
const COUNTS: [usize; 5] = [0, 1, 3, 1000, 17_000];

fn allreduce_all<T: Elem>(comm: &Comm, c: &mut Check, seed: u64) -> xcomm::Result<()> {
    let (rank, size) = (comm.rank(), comm.size());
    for (oi, op) in Op::ALL.into_iter().enumerate() {
        if op.is_bitwise() && !T::INTEGER {
            // The library rejects it, on every rank alike, before any message.
            let mut buf = vec![T::default(); 4];
            let err = comm
                .allreduce_in_place(&mut buf, op)
                .expect_err("bitwise op on a float");
            c.eq(
                format_args!("allreduce {op:?} on {}: code", T::NAME),
                err.code,
                xcomm::sys::XC_ERR_INVALID_ARGUMENT,
            );
            c.ok(
                err.message.contains("bitwise"),
                format_args!("message names the bitwise op: {err}"),
            );
            continue;
        }
        for (ci, &n) in COUNTS.iter().enumerate() {
            let s = seed ^ ((oi as u64) << 8) ^ ci as u64;
            let mine: Vec<T> = data(s, rank, n, op);
            let all: Vec<Vec<T>> = (0..size).map(|r| data(s, r, n, op)).collect();
            let want: Vec<T> = (0..n)
                .map(|i| T::expected(&all.iter().map(|v| v[i]).collect::<Vec<_>>(), op))
                .collect();

            let mut out = vec![T::default(); n];
            comm.allreduce(&mine, &mut out, op)?;
            c.slices(
                format_args!("allreduce {op:?} {} x{n}", T::NAME),
                &out,
                &want,
            );
            let mut inplace = mine.clone();
            comm.allreduce_in_place(&mut inplace, op)?;
            c.slices(
                format_args!("allreduce_in_place {op:?} {} x{n}", T::NAME),
                &inplace,
                &want,
            );
        }
    }
    Ok(())
}

fn collectives(world: &Comm, c: &mut Check) -> xcomm::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    world.barrier()?;
    allreduce_all::<i8>(world, c, 1)?;
    allreduce_all::<u8>(world, c, 2)?;
    allreduce_all::<i32>(world, c, 3)?;
    allreduce_all::<u32>(world, c, 4)?;
    allreduce_all::<i64>(world, c, 5)?;
    allreduce_all::<u64>(world, c, 6)?;
    allreduce_all::<F16>(world, c, 7)?;
    allreduce_all::<BF16>(world, c, 8)?;
    allreduce_all::<f32>(world, c, 9)?;
    allreduce_all::<f64>(world, c, 10)?;

    // broadcast from every root, small and large (pipelined) messages
    for root in 0..size {
        for n in [0usize, 1, 1000, 40_000] {
            let want: Vec<f64> = data(100 + n as u64, root, n, Op::Sum);
            let mut buf = if rank == root {
                want.clone()
            } else {
                vec![-1.0; n]
            };
            world.broadcast(&mut buf, root)?;
            c.slices(format_args!("broadcast f64 x{n} from {root}"), &buf, &want);
            let want: Vec<F16> = data(200 + n as u64, root, n, Op::Min);
            let mut buf = if rank == root {
                want.clone()
            } else {
                vec![F16(0x7e00); n]
            };
            world.broadcast(&mut buf, root)?;
            c.slices(format_args!("broadcast F16 x{n} from {root}"), &buf, &want);
        }
    }

    // allgather, out of place and in place
    for n in [0usize, 1, 777, 20_000] {
        let want: Vec<u64> = (0..size)
            .flat_map(|r| data::<u64>(300 + n as u64, r, n, Op::Sum))
            .collect();
        let mine: Vec<u64> = data(300 + n as u64, rank, n, Op::Sum);
        let mut out = vec![0u64; n * size as usize];
        world.allgather(&mine, &mut out)?;
        c.slices(format_args!("allgather u64 x{n}"), &out, &want);

        let want: Vec<BF16> = (0..size)
            .flat_map(|r| data::<BF16>(400 + n as u64, r, n, Op::Min))
            .collect();
        let mut buf = vec![BF16(0); n * size as usize];
        let at = rank as usize * n;
        buf[at..at + n].copy_from_slice(&want[at..at + n]);
        world.allgather_in_place(&mut buf)?;
        c.slices(format_args!("allgather_in_place BF16 x{n}"), &buf, &want);

        let want: Vec<i8> = (0..size)
            .flat_map(|r| data::<i8>(500 + n as u64, r, n, Op::Sum))
            .collect();
        let mut out = vec![0i8; n * size as usize];
        world.allgather(&want[at..at + n], &mut out)?;
        c.slices(format_args!("allgather i8 x{n}"), &out, &want);
    }
    world.barrier()?;
    Ok(())
}

fn point_to_point(world: &Comm, c: &mut Check) -> xcomm::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    let right = (rank + 1) % size;
    let left = (rank + size - 1) % size;

    // Blocking send/recv around the ring, eager and rendezvous sizes. Even
    // ranks send first, odd ranks receive first (no cycle of blocked sends).
    // With one rank the neighbour is this rank: a blocking send to self would
    // wait for its own receive, so that case goes through sendrecv below.
    if size > 1 {
        for n in [10usize, 100_000] {
            let out: Vec<i32> = data(600 + n as u64, rank, n, Op::Sum);
            let want: Vec<i32> = data(600 + n as u64, left, n, Op::Sum);
            let mut inbox = vec![0i32; n];
            let st = if rank % 2 == 0 {
                world.send(&out, right, 7)?;
                world.recv(&mut inbox, left, 7)?
            } else {
                let st = world.recv(&mut inbox, left, 7)?;
                world.send(&out, right, 7)?;
                st
            };
            c.slices(format_args!("send/recv ring i32 x{n}"), &inbox, &want);
            c.eq(
                format_args!("recv status x{n}"),
                (st.source, st.tag, st.error, st.bytes),
                (left, 7, 0, n * 4),
            );
            c.eq("status.count", st.count::<i32>(), n);
        }
    }

    // sendrecv around the ring (both directions at once, any size).
    for n in [0usize, 5, 50_000] {
        let out: Vec<f64> = data(700 + n as u64, rank, n, Op::Sum);
        let want: Vec<f64> = data(700 + n as u64, left, n, Op::Sum);
        let mut inbox = vec![0.0f64; n];
        let st = world.sendrecv(&out, right, 11, &mut inbox, left, 11)?;
        c.slices(format_args!("sendrecv f64 x{n}"), &inbox, &want);
        c.eq(
            format_args!("sendrecv status x{n}"),
            (st.source, st.tag, st.bytes),
            (left, 11, n * 8),
        );
    }

    // An empty u8 slice: its dangling pointer is 1, XC_IN_PLACE's value; the
    // binding must still send it as an empty message.
    {
        let mut inbox: Vec<u8> = Vec::new();
        let st = world.sendrecv(&Vec::<u8>::new(), right, 12, &mut inbox, left, 12)?;
        c.eq("sendrecv empty u8 status", (st.source, st.tag, st.bytes), (left, 12, 0));
    }

    // Non-blocking: a message to and from every rank (self included), all
    // receives posted first, then every send; wait_all for all of them.
    let n = 3000usize;
    let outs: Vec<Vec<u32>> = (0..size)
        .map(|to| data(800 + to as u64, rank, n, Op::Sum))
        .collect();
    let mut inboxes: Vec<Vec<u32>> = vec![vec![0u32; n]; size as usize];
    let statuses = xcomm::scope(|s| {
        let mut reqs = Vec::new();
        for (from, inbox) in inboxes.iter_mut().enumerate() {
            reqs.push(world.irecv(s, inbox, from as i32, 20 + from as i32)?);
        }
        for (to, out) in outs.iter().enumerate() {
            reqs.push(world.isend(s, out, to as i32, 20 + rank)?);
        }
        xcomm::wait_all(reqs)
    })?;
    for from in 0..size {
        let want: Vec<u32> = data(800 + rank as u64, from, n, Op::Sum);
        c.slices(
            format_args!("irecv from {from}"),
            &inboxes[from as usize],
            &want,
        );
        let st = statuses[from as usize];
        c.eq(
            format_args!("irecv status from {from}"),
            (st.source, st.tag, st.error, st.bytes),
            (from, 20 + from, 0, n * 4),
        );
    }

    // test() until done, then wait() on the finished request; a request
    // finished on another thread; a request dropped unfinished (waits).
    let out = [rank as i64; 64];
    let mut inbox = [0i64; 64];
    let mut inbox2 = [0i64; 64];
    let mut inbox3 = [0i64; 64];
    let polls = xcomm::scope(|s| -> xcomm::Result<usize> {
        let mut r = world.irecv(s, &mut inbox, left, 30)?;
        let r2 = world.irecv(s, &mut inbox2, left, 31)?;
        let r3 = world.irecv(s, &mut inbox3, left, 32)?;
        let w = [
            world.isend(s, &out, right, 30)?,
            world.isend(s, &out, right, 31)?,
            world.isend(s, &out, right, 32)?,
        ];
        let mut polls = 0;
        let st = loop {
            polls += 1;
            if let Some(st) = r.test()? {
                break st;
            }
            std::thread::yield_now();
        };
        c.eq(
            "test() status",
            (st.source, st.tag, st.bytes),
            (left, 30, 64 * 8),
        );
        c.ok(r.is_complete(), "is_complete after test() said done");
        let again = r.wait()?;
        c.eq(
            "wait() after test() finished it",
            (again.source, again.tag, again.bytes),
            (-1, -1, 0),
        );
        let st2 =
            std::thread::scope(|ts| ts.spawn(move || r2.wait()).join().expect("waiting thread"))?;
        c.eq(
            "wait() on another thread",
            (st2.source, st2.tag),
            (left, 31),
        );
        drop(r3); // waits for the message
        xcomm::wait_all(w)?;
        Ok(polls)
    })?;
    c.slices("test() data", &inbox, &[left as i64; 64]);
    c.slices(
        "data of a request waited on another thread",
        &inbox2,
        &[left as i64; 64],
    );
    c.slices(
        "data of a request finished by its drop",
        &inbox3,
        &[left as i64; 64],
    );
    c.ok(polls >= 1, "test() polled");

    // Messages between two ranks keep their order (same tag). (Buffers of
    // requests live outside the scope: they are borrowed for all of it.)
    let outs = [[1u8; 3], [2u8; 3], [3u8; 3]];
    xcomm::scope(|s| -> xcomm::Result<()> {
        let sends: Vec<_> = outs
            .iter()
            .map(|o| world.isend(s, o, right, 40))
            .collect::<xcomm::Result<_>>()?;
        for k in 1..=3u8 {
            let mut b = [0u8; 3];
            world.recv(&mut b, left, 40)?;
            c.eq("non-overtaking order", b, [k; 3]);
        }
        xcomm::wait_all(sends).map(drop)
    })?;

    // Any source, any tag: every rank sends rank+1 elements with tag
    // 1000+rank to rank 0, which takes them in whatever order they come.
    let out: Vec<i32> = vec![rank; rank as usize + 1];
    xcomm::scope(|s| -> xcomm::Result<()> {
        let w = world.isend(s, &out, 0, 1000 + rank)?;
        if rank == 0 {
            let mut seen = vec![false; size as usize];
            for _ in 0..size {
                let mut buf = vec![-1i32; size as usize + 1];
                let st = world.recv(&mut buf, Source::Any, Tag::Any)?;
                let from = st.source;
                c.ok(
                    (0..size).contains(&from),
                    format_args!("any-source status.source {from} in range"),
                );
                if !(0..size).contains(&from) {
                    continue;
                }
                c.ok(
                    !seen[from as usize],
                    format_args!("message from {from} received once"),
                );
                seen[from as usize] = true;
                c.eq(
                    format_args!("any-source tag from {from}"),
                    st.tag,
                    1000 + from,
                );
                c.eq(
                    format_args!("any-source bytes from {from}"),
                    st.count::<i32>(),
                    from as usize + 1,
                );
                c.slices(
                    format_args!("any-source data from {from}"),
                    &buf[..from as usize + 1],
                    &vec![from; from as usize + 1],
                );
            }
            c.ok(
                seen.iter().all(|&x| x),
                "any-source: a message from every rank",
            );
        }
        w.wait().map(drop)
    })?;
    world.barrier()?; // no later message may meet rank 0's any-source receives
                      // Any source with a given tag picks only that tag (only the left
                      // neighbour sends to this rank here).
    let (a, b) = ([1u8], [2u8]);
    xcomm::scope(|s| -> xcomm::Result<()> {
        let wa = world.isend(s, &a, right, 51)?;
        let wb = world.isend(s, &b, right, 52)?;
        let mut got = [0u8];
        let st = world.recv(&mut got, Source::Any, 52)?;
        c.eq(
            "any-source, tag 52",
            (got[0], st.source, st.tag),
            (2, left, 52),
        );
        let st = world.recv(&mut got, Source::Any, Tag::Any)?;
        c.eq(
            "any-source, any tag: the other one",
            (got[0], st.source, st.tag),
            (1, left, 51),
        );
        xcomm::wait_all([wa, wb]).map(drop)
    })?;

    // A message longer than the buffer: XC_ERR_TRUNCATED, buffer untouched;
    // the sender succeeds.
    let out = [7u64; 8];
    xcomm::scope(|s| -> xcomm::Result<()> {
        let w = world.isend(s, &out, right, 60)?;
        let mut small = [9u64; 4];
        let err = world
            .recv(&mut small, left, 60)
            .expect_err("truncated receive");
        c.eq(
            "truncated recv: code",
            err.code,
            xcomm::sys::XC_ERR_TRUNCATED,
        );
        c.eq("truncated recv: name", err.name, "XC_ERR_TRUNCATED");
        c.ok(!err.message.is_empty(), "truncated recv: a message");
        c.eq("truncated recv: buffer untouched", small, [9u64; 4]);
        w.wait().map(drop)
    })?;

    // Bad arguments, answered locally with the library's message.
    let err = world.send(&[1u8], size, 0).expect_err("send to rank size");
    c.eq(
        "send to rank size: code",
        err.code,
        xcomm::sys::XC_ERR_INVALID_ARGUMENT,
    );
    c.ok(
        err.message.contains("out of range"),
        format_args!("send to rank size: message {:?}", err.message),
    );
    let err = world.send(&[1u8], 0, -5).expect_err("negative tag");
    c.ok(
        err.message.contains("tag"),
        format_args!("negative tag: message {:?}", err.message),
    );
    world.barrier()?;
    Ok(())
}

fn communicators(world: &Comm, c: &mut Check) -> xcomm::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    c.ok((0..size).contains(&rank), "rank in range");
    c.ok(
        world.local_size() >= 1 && world.local_size() <= size,
        "local_size",
    );
    c.ok(
        (0..world.local_size()).contains(&world.local_rank()),
        "local_rank",
    );
    c.eq("async_error of a healthy world", world.async_error()?, None);

    // split by parity, reversed order (key = -rank)
    let half = world
        .split(rank % 2, -rank)?
        .expect("every rank has a colour");
    let members: Vec<i32> = (0..size).rev().filter(|r| r % 2 == rank % 2).collect();
    c.eq("split: size", half.size(), members.len() as i32);
    c.eq(
        "split: rank (ordered by key)",
        half.rank(),
        members.iter().position(|&r| r == rank).unwrap() as i32,
    );
    let mut got = vec![0i32; members.len()];
    half.allgather(&[rank], &mut got)?;
    c.eq("split: members in new-rank order", got, members.clone());
    let mut sum = [rank as i64];
    half.allreduce_in_place(&mut sum, Op::Sum)?;
    c.eq(
        "split: sum inside the group",
        sum[0],
        members.iter().map(|&r| r as i64).sum(),
    );

    // split with UNDEFINED: rank 0 joins nothing
    let color = if rank == 0 { xcomm::UNDEFINED } else { 5 };
    let rest = world.split(color, 0)?;
    c.eq("split UNDEFINED: gets None", rest.is_none(), rank == 0);
    if let Some(rest) = &rest {
        c.eq("split without rank 0: size", rest.size(), size - 1);
        c.eq("split without rank 0: rank", rest.rank(), rank - 1);
        rest.barrier()?;
    }
    drop(rest);

    // split_groups: group 0 = [last, 0], group 1 = ranks 2..last reversed;
    // rank 1 is in no group (when there is a rank 1 that is not the last).
    let last = size - 1;
    let g0: Vec<i32> = if size == 1 { vec![0] } else { vec![last, 0] };
    let g1: Vec<i32> = (2..last).rev().collect();
    let groups: [&[i32]; 2] = [&g0, &g1];
    let mine = groups.iter().find(|g| g.contains(&rank)).copied();
    let sub = world.split_groups(&groups)?;
    c.eq(
        "split_groups: None for a rank in no group",
        sub.is_none(),
        mine.is_none(),
    );
    if let (Some(sub), Some(mine)) = (&sub, mine) {
        c.eq("split_groups: size", sub.size(), mine.len() as i32);
        c.eq(
            "split_groups: rank = index in the list",
            sub.rank(),
            mine.iter().position(|&r| r == rank).unwrap() as i32,
        );
        let mut got = vec![0i32; mine.len()];
        sub.allgather(&[rank], &mut got)?;
        c.eq("split_groups: members", got, mine.to_vec());
    }
    drop(sub);
    // overlapping groups: every rank fails alike
    let bad: [&[i32]; 2] = [&[0], &[0]];
    let err = world.split_groups(&bad).expect_err("overlapping groups");
    c.eq(
        "split_groups overlapping: code",
        err.code,
        xcomm::sys::XC_ERR_INVALID_ARGUMENT,
    );
    // (with one rank the lists are too long before they overlap)
    let why = if size > 1 { "overlap" } else { "at most" };
    c.ok(
        err.message.contains(why),
        format_args!("split_groups overlapping: message {:?}", err.message),
    );

    // create_group: the even ranks, reversed, made by them alone; the odd
    // ranks go straight on to the next check
    let evens: Vec<i32> = (0..size).filter(|r| r % 2 == 0).rev().collect();
    if rank % 2 == 0 {
        let g = world.create_group(&evens, 3)?;
        c.eq("create_group: size", g.size(), evens.len() as i32);
        c.eq(
            "create_group: rank = index in the list",
            g.rank(),
            evens.iter().position(|&r| r == rank).unwrap() as i32,
        );
        let mut got = vec![0i32; evens.len()];
        g.allgather(&[rank], &mut got)?;
        c.eq("create_group: members", got, evens.clone());
        let err = world
            .create_group(&evens, 3)
            .expect_err("a second live group with the same ranks and tag");
        c.eq(
            "create_group twice with one tag: code",
            err.code,
            xcomm::sys::XC_ERR_INVALID_USAGE,
        );
    }
    let err = world.create_group(&[], 4).expect_err("an empty list");
    c.eq(
        "create_group with no ranks: code",
        err.code,
        xcomm::sys::XC_ERR_INVALID_ARGUMENT,
    );

    // dup: same ranks, messages never cross with the parent's
    let dup = world.dup()?;
    c.eq("dup: rank and size", (dup.rank(), dup.size()), (rank, size));
    let right = (rank + 1) % size;
    let left = (rank + size - 1) % size;
    let (on_dup, on_world) = ([1u8], [2u8]);
    xcomm::scope(|s| -> xcomm::Result<()> {
        let a = dup.isend(s, &on_dup, right, 5)?;
        let b = world.isend(s, &on_world, right, 5)?;
        let mut got = [0u8];
        world.recv(&mut got, left, 5)?;
        c.eq("dup: the world's message on the world", got[0], 2);
        dup.recv(&mut got, left, 5)?;
        c.eq("dup: the dup's message on the dup", got[0], 1);
        xcomm::wait_all([a, b]).map(drop)
    })?;

    // Threads: two communicators used at once from two threads, sharing &Comm.
    let other = world.dup()?;
    let (r1, r2) = std::thread::scope(|ts| {
        let t1 = ts.spawn(|| -> xcomm::Result<i64> {
            let mut total = 0;
            for k in 0..50 {
                let mut v = [k as i64 + rank as i64];
                dup.allreduce_in_place(&mut v, Op::Sum)?;
                total += v[0];
            }
            Ok(total)
        });
        let t2 = ts.spawn(|| -> xcomm::Result<i32> {
            let mut total = 0;
            for _ in 0..50 {
                let mut got = [0i32];
                other.sendrecv(&[rank], right, 3, &mut got, left, 3)?;
                total += got[0];
            }
            Ok(total)
        });
        (t1.join().expect("thread 1"), t2.join().expect("thread 2"))
    });
    let n = size as i64;
    c.eq(
        "threads: allreduces on a dup",
        r1?,
        (0..50).map(|k| k * n + n * (n - 1) / 2).sum::<i64>(),
    );
    c.eq("threads: sendrecvs on another dup", r2?, 50 * left);
    drop(other);

    // abort: later ops fail with XC_ERR_ABORTED; the drop does not synchronise.
    dup.abort()?;
    let err = dup
        .barrier()
        .expect_err("barrier on an aborted communicator");
    c.eq("aborted: code", err.code, xcomm::sys::XC_ERR_ABORTED);
    let async_err = dup.async_error()?.map(|e| e.code);
    c.eq(
        "aborted: async_error",
        async_err,
        Some(xcomm::sys::XC_ERR_ABORTED),
    );
    drop(dup);

    // A unique id made by rank 0 and handed out with a broadcast.
    let mut bytes = [0u8; 128];
    if rank == 0 {
        bytes = *UniqueId::new()?.as_bytes();
    }
    world.broadcast(&mut bytes, 0)?;
    let id = UniqueId::from_bytes(&bytes);
    let own = Comm::init_rank(size, &id, rank)?;
    c.eq(
        "init_rank: rank and size",
        (own.rank(), own.size()),
        (rank, size),
    );
    let mut v = [1u32];
    own.allreduce_in_place(&mut v, Op::Sum)?;
    c.eq("init_rank: allreduce", v[0], size as u32);
    own.free()?;

    // The same with options: a name, a timeout, the serialized thread mode
    // (the wrapper's lock), a debug level.
    let mut bytes = [0u8; 128];
    if rank == 0 {
        bytes = *UniqueId::new()?.as_bytes();
    }
    world.broadcast(&mut bytes, 0)?;
    let cfg = Config::new()
        .name("rust-serial")
        .timeout_ms(60_000)
        .thread_mode(ThreadMode::Serialized)
        .debug_level(xcomm::DebugLevel::Default);
    let serial = Comm::init_rank_with(size, &UniqueId::from_bytes(&bytes), rank, &cfg)?;
    let out = [rank; 16];
    let mut inbox = [0i32; 16];
    let st = xcomm::scope(|s| -> xcomm::Result<xcomm::Status> {
        let r = serial.irecv(s, &mut inbox, left, 1)?;
        let w = serial.isend(s, &out, right, 1)?;
        let mut all = xcomm::wait_all([r, w])?;
        Ok(all.remove(0))
    })?;
    c.eq("serialized: irecv", (inbox, st.source), ([left; 16], left));
    let threads_total = std::thread::scope(|ts| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                ts.spawn(|| -> xcomm::Result<i32> {
                    let mut v = [1i32];
                    serial.allreduce_in_place(&mut v, Op::Sum)?; // the lock keeps the two calls apart
                    Ok(v[0])
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("thread"))
            .collect::<xcomm::Result<Vec<_>>>()
    });
    // Two threads per rank run one allreduce each; the order in which they
    // match across ranks is arbitrary, but each sums one value per rank.
    c.eq(
        "serialized: allreduce from two threads",
        threads_total?,
        vec![size, size],
    );
    drop(serial);

    // A short timeout on a split: a receive that nothing matches times out
    // and names the communicator.
    let quick = world
        .split_with(0, rank, &Config::new().timeout_ms(200).name("quick"))?
        .expect("colour 0");
    let mut nothing = [0u8; 1];
    let t0 = Instant::now();
    let err = quick
        .recv(&mut nothing, left, 99)
        .expect_err("nothing is sent");
    c.eq("timeout: code", err.code, xcomm::sys::XC_ERR_TIMEOUT);
    c.ok(
        err.message.contains("quick"),
        format_args!("timeout: message names the comm: {:?}", err.message),
    );
    c.ok(
        t0.elapsed().as_millis() >= 150,
        "timeout: waited about the configured time",
    );
    quick.barrier()?;
    drop(quick);

    // Rust-side checks: lengths are validated before C is called.
    let err = world
        .allreduce(&[1i32, 2], &mut [0i32; 3], Op::Sum)
        .expect_err("length mismatch");
    c.eq(
        "allreduce length mismatch: code",
        err.code,
        xcomm::sys::XC_ERR_INVALID_ARGUMENT,
    );
    let err = world
        .allgather(&[1i32, 2], &mut [0i32; 1])
        .expect_err("recvbuf too small");
    c.eq(
        "allgather length mismatch: name",
        err.name,
        "XC_ERR_INVALID_ARGUMENT",
    );
    let err = world
        .broadcast(&mut [0u8; 2], size)
        .expect_err("root out of range");
    c.ok(
        err.message.contains("root"),
        format_args!("broadcast bad root: message {:?}", err.message),
    );
    world.barrier()?;
    Ok(())
}

/// Every check, on `world` (any size, 1 included).
pub fn run(world: &Comm) -> xcomm::Result<Report> {
    let mut c = Check {
        rank: world.rank(),
        checks: 0,
        failures: 0,
        skipped: 0,
    };
    communicators(world, &mut c)?;
    point_to_point(world, &mut c)?;
    collectives(world, &mut c)?;
    collective_set(world, &mut c)?;
    nonblocking_and_groups(world, &mut c)?;
    memory(world, &mut c)?;
    fault_tolerance(world, &mut c)?;
    // Agree on the outcome, so every rank exits with the same status.
    let mut failed = [c.failures as u64];
    world.allreduce_in_place(&mut failed, Op::Max)?;
    c.ok(failed[0] == 0 || c.failures > 0, "another rank failed");
    Ok(Report {
        checks: c.checks,
        failures: c.failures,
        skipped: c.skipped,
    })
}

// ---- fault tolerance, without a failure (tests/fault kills ranks) ------------------

fn fault_tolerance(world: &Comm, c: &mut Check) -> xcomm::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    // Each rank clears its own bit: the AND clears the bits of every rank.
    let (flag, none_failed) = world.agree(0xFFFF & !(1 << rank))?;
    c.eq("agree: the AND of the flags", flag, 0xFFFF & !((1 << size) - 1));
    c.ok(none_failed, "agree: no rank failed");
    c.eq("failed_ranks on a healthy world", world.failed_ranks()?, Vec::<i32>::new());
    let d = world.dup()?;
    d.revoke()?;
    let mut v = [1i64];
    match d.allreduce_in_place(&mut v, Op::Sum) {
        Err(e) => c.eq("an op on a revoked communicator", e.code, xcomm::sys::XC_ERR_REVOKED),
        Ok(()) => c.ok(false, "an op on a revoked communicator succeeded"),
    }
    let child = d.shrink()?;
    c.eq("shrink without a failure: rank, size", (child.rank(), child.size()), (rank, size));
    let mut total = [rank as i64 + 1];
    child.allreduce_in_place(&mut total, Op::Sum)?;
    c.eq("an allreduce on the shrunk communicator", total[0], (size * (size + 1) / 2) as i64);
    drop(child);
    drop(d);
    let id = if rank == 0 { Some(UniqueId::new()?) } else { None };
    let grown = world.grow(0, id.as_ref())?;
    c.eq("grow by 0: rank, size", (grown.rank(), grown.size()), (rank, size));
    let mut total = [rank as i64 + 1];
    grown.allreduce_in_place(&mut total, Op::Sum)?;
    c.eq("an allreduce on the grown communicator", total[0], (size * (size + 1) / 2) as i64);
    Ok(())
}

// ---- the rest of the collective set ----------------------------------------------

/// Element-wise reduction of `all[ranks]` (the reference).
fn reduced<T: Elem>(all: &[Vec<T>], ranks: std::ops::Range<usize>, op: Op) -> Vec<T> {
    (0..all[0].len())
        .map(|i| T::expected(&all[ranks.clone()].iter().map(|v| v[i]).collect::<Vec<_>>(), op))
        .collect()
}

/// Uneven counts per rank, some of them zero.
fn v_counts(size: i32, salt: usize) -> Vec<usize> {
    (0..size as usize).map(|r| (r * 7 + salt) % 5).collect()
}

/// Displacements with a gap of 3 elements before every block.
fn gappy(counts: &[usize]) -> Vec<usize> {
    let mut at = 0;
    counts.iter().map(|&c| { at += 3; let d = at; at += c; d }).collect()
}

fn packed(counts: &[usize]) -> Vec<usize> {
    counts.iter().scan(0, |at, &c| { let d = *at; *at += c; Some(d) }).collect()
}

fn collective_set(world: &Comm, c: &mut Check) -> xcomm::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    let (me, n) = (rank as usize, size as usize);

    // reduce, to every root, and in place at the last one
    for root in 0..size {
        for op in [Op::Sum, Op::Max] {
            let s = 100 + root as u64;
            let all: Vec<Vec<i64>> = (0..size).map(|r| data(s, r, 37, op)).collect();
            let mut out = vec![0i64; 37];
            let recv = (rank == root).then_some(&mut out[..]);
            if c.ran("reduce", world.reduce(&all[me], recv, op, root))? && rank == root {
                c.slices(format_args!("reduce {op:?} i64 to {root}"), &out, &reduced(&all, 0..n, op));
            }
        }
    }
    let all: Vec<Vec<f64>> = (0..size).map(|r| data(7, r, 20, Op::Sum)).collect();
    let mut buf = all[me].clone();
    if c.ran("reduce_in_place", world.reduce_in_place(&mut buf, Op::Sum, size - 1))? && rank == size - 1 {
        c.slices("reduce_in_place f64", &buf, &reduced(&all, 0..n, Op::Sum));
    }

    // gather and gatherv (packed and with gaps), to every root
    let counts = v_counts(size, 2);
    for root in 0..size {
        let all: Vec<Vec<u32>> = (0..size).map(|r| data(200 + root as u64, r, 5, Op::Sum)).collect();
        let mut out = vec![0u32; 5 * n];
        let recv = (rank == root).then_some(&mut out[..]);
        if c.ran("gather", world.gather(&all[me], recv, root))? && rank == root {
            c.slices(format_args!("gather u32 to {root}"), &out, &all.concat());
        }
        for displs in [packed(&counts), gappy(&counts)] {
            let all: Vec<Vec<i32>> = (0..size).map(|r| data(300 + root as u64, r, counts[r as usize], Op::Sum)).collect();
            let extent = displs[n - 1] + counts[n - 1];
            let mut out = vec![0i32; extent];
            let recv = (rank == root).then_some(&mut out[..]);
            if c.ran("gatherv", world.gatherv(&all[me], recv, &counts, Some(&displs), root))? && rank == root {
                for r in 0..n {
                    c.slices(format_args!("gatherv to {root}: block of {r}"), &out[displs[r]..displs[r] + counts[r]],
                             &all[r]);
                }
            }
        }
    }

    // allgatherv: packed (displs None), with gaps, and in place
    let counts = v_counts(size, 1);
    let all: Vec<Vec<f64>> = (0..size).map(|r| data(400, r, counts[r as usize], Op::Sum)).collect();
    let mut out = vec![0f64; counts.iter().sum()];
    if c.ran("allgatherv", world.allgatherv(&all[me], &mut out, &counts, None))? {
        c.slices("allgatherv packed f64", &out, &all.concat());
    }
    let displs = gappy(&counts);
    let mut out = vec![0f64; displs[n - 1] + counts[n - 1]];
    if c.ran("allgatherv", world.allgatherv(&all[me], &mut out, &counts, Some(&displs)))? {
        for r in 0..n {
            c.slices(format_args!("allgatherv gappy: block of {r}"), &out[displs[r]..displs[r] + counts[r]], &all[r]);
        }
    }
    let mut buf = vec![0f64; counts.iter().sum()];
    let at = packed(&counts);
    buf[at[me]..at[me] + counts[me]].copy_from_slice(&all[me]);
    if c.ran("allgatherv_in_place", world.allgatherv_in_place(&mut buf, &counts, None))? {
        c.slices("allgatherv_in_place f64", &buf, &all.concat());
    }

    // scatter and scatterv, from every root
    let counts = v_counts(size, 4);
    for root in 0..size {
        let full: Vec<u64> = data(500 + root as u64, root, 11 * n, Op::Sum);
        let mut out = vec![0u64; 11];
        let send = (rank == root).then_some(&full[..]);
        if c.ran("scatter", world.scatter(send, &mut out, root))? {
            c.slices(format_args!("scatter u64 from {root}"), &out, &full[11 * me..11 * (me + 1)]);
        }
        let displs = gappy(&counts);
        let full: Vec<i64> = data(600 + root as u64, root, displs[n - 1] + counts[n - 1], Op::Sum);
        let mut out = vec![0i64; counts[me]];
        let send = (rank == root).then_some(&full[..]);
        if c.ran("scatterv", world.scatterv(send, &counts, Some(&displs), &mut out, root))? {
            c.slices(format_args!("scatterv i64 from {root}"), &out, &full[displs[me]..displs[me] + counts[me]]);
        }
    }

    // reduce_scatter and reduce_scatterv
    for op in [Op::Sum, Op::Bxor] {
        let all: Vec<Vec<u8>> = (0..size).map(|r| data(700, r, 13 * n, op)).collect();
        let want = reduced(&all, 0..n, op);
        let mut out = vec![0u8; 13];
        if c.ran("reduce_scatter", world.reduce_scatter(&all[me], &mut out, op))? {
            c.slices(format_args!("reduce_scatter {op:?} u8"), &out, &want[13 * me..13 * (me + 1)]);
        }
    }
    let counts = v_counts(size, 0);
    let at = packed(&counts);
    let all: Vec<Vec<f64>> = (0..size).map(|r| data(800, r, counts.iter().sum(), Op::Max)).collect();
    let want = reduced(&all, 0..n, Op::Max);
    let mut out = vec![0f64; counts[me]];
    if c.ran("reduce_scatterv", world.reduce_scatterv(&all[me], &mut out, &counts, Op::Max))? {
        c.slices("reduce_scatterv max f64", &out, &want[at[me]..at[me] + counts[me]]);
    }

    // alltoall (and in place), alltoallv with gaps on the receive side
    let all: Vec<Vec<i32>> = (0..size).map(|r| data(900, r, 9 * n, Op::Sum)).collect();
    let want: Vec<i32> = (0..n).flat_map(|j| all[j][9 * me..9 * (me + 1)].to_vec()).collect();
    let mut out = vec![0i32; 9 * n];
    if c.ran("alltoall", world.alltoall(&all[me], &mut out))? {
        c.slices("alltoall i32", &out, &want);
    }
    let mut buf = all[me].clone();
    if c.ran("alltoall_in_place", world.alltoall_in_place(&mut buf))? {
        c.slices("alltoall_in_place i32", &buf, &want);
    }
    let count = |src: usize, dst: usize| (src * 3 + dst * 2) % 4;
    let sendcounts: Vec<usize> = (0..n).map(|j| count(me, j)).collect();
    let recvcounts: Vec<usize> = (0..n).map(|j| count(j, me)).collect();
    let rdispls = gappy(&recvcounts);
    let all: Vec<Vec<f32>> = (0..size).map(|r| data(1000, r, (0..n).map(|j| count(r as usize, j)).sum(), Op::Sum)).collect();
    let mut out = vec![0f32; rdispls[n - 1] + recvcounts[n - 1]];
    if c.ran("alltoallv", world.alltoallv(&all[me], &sendcounts, None, &mut out, &recvcounts, Some(&rdispls)))? {
        for j in 0..n {
            let start: usize = (0..me).map(|d| count(j, d)).sum();
            c.slices(format_args!("alltoallv: block from {j}"), &out[rdispls[j]..rdispls[j] + recvcounts[j]],
                     &all[j][start..start + count(j, me)]);
        }
    }

    // scan, exscan (rank 0's output untouched), in place
    for op in [Op::Sum, Op::Min] {
        let all: Vec<Vec<i64>> = (0..size).map(|r| data(1100, r, 50, op)).collect();
        let mut out = vec![0i64; 50];
        if c.ran("scan", world.scan(&all[me], &mut out, op))? {
            c.slices(format_args!("scan {op:?} i64"), &out, &reduced(&all, 0..me + 1, op));
        }
        let mut out = vec![-5i64; 50];
        if c.ran("exscan", world.exscan(&all[me], &mut out, op))? {
            let want = if me == 0 { vec![-5i64; 50] } else { reduced(&all, 0..me, op) };
            c.slices(format_args!("exscan {op:?} i64"), &out, &want);
        }
    }
    let all: Vec<Vec<f64>> = (0..size).map(|r| data(1200, r, 8, Op::Sum)).collect();
    let mut buf = all[me].clone();
    if c.ran("scan_in_place", world.scan_in_place(&mut buf, Op::Sum))? {
        c.slices("scan_in_place f64", &buf, &reduced(&all, 0..me + 1, Op::Sum));
    }
    let mut buf = all[me].clone();
    if c.ran("exscan_in_place", world.exscan_in_place(&mut buf, Op::Sum))? {
        let want = if me == 0 { all[0].clone() } else { reduced(&all, 0..me, Op::Sum) };
        c.slices("exscan_in_place f64", &buf, &want);
    }

    // Bad arguments are caught before the library is called.
    let err = world.allgatherv(&[1u8], &mut [0u8; 8], &vec![1; n + 1], None).expect_err("counts too long");
    c.ok(err.message.contains("counts"), format_args!("allgatherv: counts length named: {err}"));
    let err = world.scatter(None::<&[u8]>, &mut [0u8; 2], rank).expect_err("no sendbuf at the root");
    c.ok(err.message.contains("root"), format_args!("scatter: missing sendbuf named: {err}"));
    Ok(())
}

fn nonblocking_and_groups(world: &Comm, c: &mut Check) -> xcomm::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    let (me, n) = (rank as usize, size as usize);

    // several non-blocking collectives in flight at once
    let all: Vec<Vec<i64>> = (0..size).map(|r| data(1300, r, 5000, Op::Sum)).collect();
    let mut sum = vec![0i64; 5000];
    let mut bcast = if rank == 0 { all[0].clone() } else { vec![0i64; 5000] };
    let mut gathered = vec![0i64; 5000 * n];
    let mut prefix = vec![0i64; 5000];
    let started = xcomm::scope(|s| -> xcomm::Result<()> {
        let reqs = vec![
            world.iallreduce(s, &all[me], &mut sum, Op::Sum)?,
            world.ibroadcast(s, &mut bcast, 0)?,
            world.ibarrier(s)?,
            world.iallgather(s, &all[me], &mut gathered)?,
            world.iscan(s, &all[me], &mut prefix, Op::Sum)?,
        ];
        xcomm::wait_all(reqs).map(drop)
    });
    if c.ran("non-blocking collectives", started)? {
        c.slices("iallreduce i64", &sum, &reduced(&all, 0..n, Op::Sum));
        c.slices("ibroadcast i64", &bcast, &all[0]);
        c.slices("iallgather i64", &gathered, &all.concat());
        c.slices("iscan i64", &prefix, &reduced(&all, 0..me + 1, Op::Sum));
    }
    let counts = v_counts(size, 3);
    let mine: Vec<u8> = data(1400, rank, counts[me], Op::Sum);
    let mut out = vec![0u8; counts.iter().sum()];
    let started = xcomm::scope(|s| world.iallgatherv(s, &mine, &mut out, &counts, None)?.wait().map(drop));
    if c.ran("iallgatherv", started)? {
        let want: Vec<u8> = (0..size).flat_map(|r| data::<u8>(1400, r, counts[r as usize], Op::Sum)).collect();
        c.slices("iallgatherv u8", &out, &want);
    }

    // a group: every rank sends 1 MiB to every other rank, sends first
    let count = 1 << 17;
    let out: Vec<f64> = data(1500, rank, count, Op::Sum);
    let mut inbox: Vec<Vec<f64>> = vec![vec![0.0; count]; n];
    let done = xcomm::group(|g| {
        for peer in (0..size).filter(|&p| p != rank) {
            g.send(world, &out, peer, 11)?;
        }
        for (peer, buf) in inbox.iter_mut().enumerate().filter(|(p, _)| *p != me) {
            g.recv(world, buf, peer as i32, 11)?;
        }
        Ok(())
    });
    if c.ran("group of sends and receives", done)? {
        for peer in (0..size).filter(|&p| p != rank) {
            c.slices(format_args!("group: message from {peer}"), &inbox[peer as usize], &data(1500, peer, count, Op::Sum));
        }
        // A Comm call that takes buffers is refused inside a group.
        let err = xcomm::group(|_| world.send(&[1u8], rank, 0)).expect_err("blocking send in a group");
        c.eq("blocking call in a group: code", err.code, xcomm::sys::XC_ERR_INVALID_USAGE);
    }
    Ok(())
}

// ---- memory for communication (xc_mem_alloc / xc_mem_free) -------------------------

const MEM_ALIGN: usize = 2 << 20;

fn memory(world: &Comm, c: &mut Check) -> xcomm::Result<()> {
    let (rank, size) = (world.rank(), world.size());

    // Alignment, zero fill, writes read back, for sizes around one 2 MiB page.
    for bytes in [1usize, 4096, MEM_ALIGN, 3 * MEM_ALIGN + 5] {
        let mut mem: Memory = world.mem_alloc(bytes)?;
        c.eq(format_args!("mem_alloc({bytes}).len()"), mem.len(), bytes);
        c.eq(
            format_args!("mem_alloc({bytes}) address % 2 MiB"),
            mem.as_ptr() as usize % MEM_ALIGN,
            0,
        );
        c.ok(!mem.as_ptr().is_null(), format_args!("mem_alloc({bytes}) is not NULL"));
        c.ok(
            mem.iter().all(|&b| b == 0),
            format_args!("mem_alloc({bytes}) starts zero-filled"),
        );
        let pattern: Vec<u8> = (0..bytes).map(|i| (i * 7 % 251) as u8).collect();
        mem.copy_from_slice(&pattern);
        c.slices(format_args!("mem_alloc({bytes}) reads back"), &mem[..], &pattern);
        mem.free()?;
    }

    // An empty one: no allocation, empty slices, an op of 0 elements.
    let mut empty = world.mem_alloc(0)?;
    c.ok(
        empty.is_empty() && empty.as_ptr().is_null() && empty.as_slice_of::<f64>().is_empty(),
        "mem_alloc(0) is empty and NULL",
    );
    world.allreduce_in_place(empty.as_mut_slice_of::<f64>(), Op::Sum)?;
    drop(empty);

    // allreduce out of place and in place in xc_mem_alloc memory, small and
    // past one huge page, against the reference reduction.
    for (k, n) in [1000usize, MEM_ALIGN / 8 + 1000].into_iter().enumerate() {
        let s = 9000 + k as u64;
        let all: Vec<Vec<f64>> = (0..size).map(|r| data(s, r, n, Op::Sum)).collect();
        let want = reduced(&all, 0..size as usize, Op::Sum);
        let mut src = world.mem_alloc(n * 8)?;
        let mut dst = world.mem_alloc(n * 8)?;
        src.as_mut_slice_of::<f64>().copy_from_slice(&all[rank as usize]);
        world.allreduce(src.as_slice_of::<f64>(), dst.as_mut_slice_of::<f64>(), Op::Sum)?;
        c.slices(format_args!("allreduce f64 x{n} in mem_alloc memory"), dst.as_slice_of::<f64>(), &want);
        c.slices(
            format_args!("allreduce f64 x{n}: mem_alloc input untouched"),
            src.as_slice_of::<f64>(),
            &all[rank as usize],
        );
        world.allreduce_in_place(src.as_mut_slice_of::<f64>(), Op::Sum)?;
        c.slices(format_args!("allreduce_in_place f64 x{n} in mem_alloc memory"), src.as_slice_of::<f64>(), &want);
        drop(dst);
        src.free()?;
    }

    // The bytes themselves (deref to [u8]) as a u8 buffer; a broadcast into it.
    let n = 4097;
    let all: Vec<Vec<u8>> = (0..size).map(|r| data(9100, r, n, Op::Bxor)).collect();
    let mut mem = world.mem_alloc(n)?;
    mem.copy_from_slice(&all[rank as usize]);
    world.allreduce_in_place(&mut mem[..], Op::Bxor)?;
    c.slices("allreduce_in_place u8 (Bxor) on Memory's bytes", &mem[..], &reduced(&all, 0..size as usize, Op::Bxor));
    let root = size - 1;
    mem.copy_from_slice(&all[rank as usize]);
    world.broadcast(&mut mem[..], root)?;
    c.slices(format_args!("broadcast into Memory from {root}"), &mem[..], &all[root as usize]);
    drop(mem);

    // The memory outlives the communicator it came from.
    let d = world.dup()?;
    let mut kept = d.mem_alloc(100)?;
    d.free()?;
    kept.as_mut_slice_of::<i32>()[24] = 7;
    c.eq("Memory after its communicator is freed", kept.as_slice_of::<i32>()[24], 7);
    kept.free()?;

    // Dropped and freed again and again: nothing leaks into an error.
    for i in 0..32usize {
        let mut m = world.mem_alloc(MEM_ALIGN + i)?;
        m[MEM_ALIGN + i - 1] = i as u8;
    }
    c.ok(world.mem_alloc(64)?.free().is_ok(), "mem_alloc after 32 allocations dropped");

    // More than any machine has, and sizes whose rounding up to 2 MiB overflows.
    for bytes in [1usize << 62, usize::MAX, usize::MAX - MEM_ALIGN + 2] {
        match world.mem_alloc(bytes) {
            Ok(m) => c.ok(false, format_args!("mem_alloc({bytes}) succeeded with {} bytes", m.len())),
            Err(e) => c.ok(
                e.code == xcomm::sys::XC_ERR_NO_MEMORY || e.code == xcomm::sys::XC_ERR_INVALID_ARGUMENT,
                format_args!("mem_alloc({bytes}) fails with NO_MEMORY or INVALID_ARGUMENT: {e}"),
            ),
        }
    }

    // The raw C contract the wrapper relies on: a pointer freed already, or
    // one xc_mem_alloc did not return, is XC_ERR_INVALID_ARGUMENT.
    let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
    let rc = unsafe { xcomm::sys::xc_mem_alloc(world.as_raw(), 64, &mut p) };
    c.eq("xc_mem_alloc(64)", rc, xcomm::sys::XC_SUCCESS);
    let mut local = [0u8; 64];
    let rc = unsafe { xcomm::sys::xc_mem_free(world.as_raw(), local.as_mut_ptr() as *mut _) };
    c.eq("xc_mem_free of a stack pointer", rc, xcomm::sys::XC_ERR_INVALID_ARGUMENT);
    let rc = unsafe { xcomm::sys::xc_mem_free(world.as_raw(), p) };
    c.eq("xc_mem_free", rc, xcomm::sys::XC_SUCCESS);
    let rc = unsafe { xcomm::sys::xc_mem_free(std::ptr::null_mut(), p) };
    c.eq("xc_mem_free twice", rc, xcomm::sys::XC_ERR_INVALID_ARGUMENT);
    let rc = unsafe { xcomm::sys::xc_mem_free(std::ptr::null_mut(), std::ptr::null_mut()) };
    c.eq("xc_mem_free(NULL)", rc, xcomm::sys::XC_SUCCESS);
    p = std::ptr::null_mut();
    let rc = unsafe { xcomm::sys::xc_mem_alloc(std::ptr::null_mut(), 64, &mut p) };
    c.eq("xc_mem_alloc with a NULL comm", rc, xcomm::sys::XC_ERR_INVALID_ARGUMENT);
    c.ok(p.is_null(), "xc_mem_alloc with a NULL comm leaves *ptr untouched");
    if rc == xcomm::sys::XC_SUCCESS {
        unsafe { xcomm::sys::xc_mem_free(std::ptr::null_mut(), p) };
    }
    world.barrier()?;
    Ok(())
}
