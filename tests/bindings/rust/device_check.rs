//! Device-memory checks of the Rust bindings: [`xcomm::Stream`] (made and
//! wrapped), [`xcomm::Comm::bind_stream`], [`xcomm::DeviceMemory`] and
//! registrations, with allreduce, broadcast and a ring of sends and
//! receives on device memory through `xcomm::sys`. Run under xcrun with
//! `XC_DEVICE=emulated` by tests/bindings/rust/run.sh (meson:
//! rust_device_nN, suites bindings and device); on the emulated device the
//! "device memory" is host memory, which this program fills and checks
//! through its address.
//!
//! Exit status: 0 when every check passed, 1 on a failure, 77 (skipped)
//! without a device unless `XC_DEVICE=emulated` asked for one.

use std::ffi::c_void;
use std::ptr;
use std::slice;

use xcomm::{sys, Bind, Comm, DeviceMemory, Stream};

struct Check {
    rank: i32,
    checks: usize,
    failures: usize,
}

impl Check {
    fn ok(&mut self, cond: bool, what: &str) {
        self.checks += 1;
        if !cond {
            self.failures += 1;
            eprintln!("rank {}: FAILED: {what}", self.rank);
        }
    }
}

fn rc(code: sys::xc_result_t) -> xcomm::Result<()> {
    if code == sys::XC_SUCCESS {
        Ok(())
    } else {
        // SAFETY: xc_last_error never returns NULL.
        let msg = unsafe { std::ffi::CStr::from_ptr(sys::xc_last_error()) };
        Err(xcomm::Error {
            code,
            name: xcomm::code_name(code),
            message: msg.to_string_lossy().into_owned(),
        })
    }
}

/// The f64 elements of emulated device memory, seen from the host.
///
/// # Safety
/// Only on the emulated device, with no op on the memory pending.
unsafe fn host(mem: &DeviceMemory) -> &mut [f64] {
    unsafe { slice::from_raw_parts_mut(mem.device_ptr() as *mut f64, mem.len() / 8) }
}

fn run(world: &Comm, c: &mut Check) -> xcomm::Result<()> {
    let (rank, size) = (world.rank(), world.size());
    let n = 1000usize;
    let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);

    let x = world.mem_alloc_device(n * 8)?;
    let y = world.mem_alloc_device(n * 8)?;
    c.ok(
        !x.as_ptr().is_null() && x.len() == n * 8,
        "mem_alloc_device gives n * 8 bytes",
    );

    // allreduce on a stream bound to the collectives.
    let s = Stream::new(world)?;
    c.ok(s.native().is_none(), "a made stream wraps nothing");
    world.bind_stream(Some(&s), Bind::Collectives)?;
    unsafe { host(&x) }
        .iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v = (rank as usize * n + i) as f64);
    rc(unsafe {
        sys::xc_allreduce(
            x.device_ptr(),
            y.device_ptr(),
            n,
            sys::XC_FLOAT64,
            sys::XC_SUM,
            world.as_raw(),
        )
    })?;
    s.synchronize()?;
    let ranks = size as usize;
    let want = |i: usize| (n * ranks * (ranks - 1) / 2 + ranks * i) as f64;
    c.ok(
        unsafe { host(&y) }
            .iter()
            .enumerate()
            .all(|(i, v)| *v == want(i)),
        "allreduce of device memory",
    );

    // broadcast from the last rank, on the same stream.
    unsafe { host(&x) }.fill(rank as f64);
    rc(unsafe { sys::xc_broadcast(x.device_ptr(), n, sys::XC_FLOAT64, size - 1, world.as_raw()) })?;
    s.synchronize()?;
    c.ok(
        unsafe { host(&x) }.iter().all(|v| *v == (size - 1) as f64),
        "broadcast of device memory",
    );
    world.bind_stream(None, Bind::Collectives)?;

    // A ring of sends and receives in a group, on a wrapped stream bound to both peers.
    // SAFETY: NULL is the legacy default stream, which lives for the process.
    let t = unsafe { Stream::wrap(world, ptr::null_mut()) }?;
    c.ok(
        t.native() == Some(0),
        "a wrapped stream knows its CUDA stream",
    );
    world.bind_stream(Some(&t), Bind::Peer(right))?;
    world.bind_stream(Some(&t), Bind::Peer(left))?;
    unsafe { host(&x) }.fill((rank * 10) as f64);
    unsafe { host(&y) }.fill(-1.0);
    rc(unsafe { sys::xc_group_start() })?;
    let sent =
        rc(unsafe { sys::xc_send(x.device_ptr(), n, sys::XC_FLOAT64, right, 7, world.as_raw()) });
    let received = rc(unsafe {
        sys::xc_recv(
            y.device_ptr(),
            n,
            sys::XC_FLOAT64,
            left,
            7,
            world.as_raw(),
            ptr::null_mut(),
        )
    });
    rc(unsafe { sys::xc_group_end() })?;
    sent?;
    received?;
    t.synchronize()?;
    c.ok(
        unsafe { host(&y) }.iter().all(|v| *v == (left * 10) as f64),
        "send/recv ring of device memory",
    );
    t.destroy()?;

    // Registered memory, broadcast into again and again.
    world.bind_stream(Some(&s), Bind::Collectives)?;
    {
        let reg = world.register_buffer(&x)?;
        c.ok(
            !reg.as_raw().is_null(),
            "register_buffer gives a registration",
        );
        for round in 1..=3 {
            unsafe { host(&x) }.fill((rank + round) as f64);
            rc(unsafe {
                sys::xc_broadcast(x.device_ptr(), n, sys::XC_FLOAT64, 0, world.as_raw())
            })?;
            s.synchronize()?;
            c.ok(
                unsafe { host(&x) }.iter().all(|v| *v == round as f64),
                "broadcast into a registered buffer",
            );
        }
        reg.deregister()?;
    }
    world.bind_stream(None, Bind::Collectives)?;

    // Bad input.
    let mut word = [0u64; 4];
    let e = unsafe { world.register_raw(word.as_mut_ptr() as *mut c_void, 32) }
        .expect_err("host memory");
    c.ok(
        e.code == sys::XC_ERR_INVALID_ARGUMENT,
        "register_raw of host memory is XC_ERR_INVALID_ARGUMENT",
    );
    let e = world
        .bind_stream(Some(&s), Bind::Peer(-2))
        .expect_err("a negative peer");
    c.ok(
        e.code == sys::XC_ERR_INVALID_ARGUMENT,
        "bind_stream to a negative peer is XC_ERR_INVALID_ARGUMENT",
    );
    let e = world
        .bind_stream(Some(&s), Bind::Peer(size))
        .expect_err("a peer out of range");
    c.ok(
        e.code == sys::XC_ERR_INVALID_ARGUMENT,
        "bind_stream to a peer out of range is XC_ERR_INVALID_ARGUMENT",
    );
    c.ok(
        world.mem_alloc_device(0)?.is_empty(),
        "0 bytes of device memory are empty",
    );

    s.destroy()?;
    x.free()?;
    drop(y); // freed by Drop
    Ok(())
}

fn main() {
    let device = std::env::var("XC_DEVICE").unwrap_or_default();
    let world = match xcomm::init() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("xcomm::init failed: {e}");
            std::process::exit(1);
        }
    };
    let rank = world.rank();
    match world.mem_alloc_device(0) {
        Err(e) if e.code == sys::XC_ERR_UNSUPPORTED && device != "emulated" => {
            if rank == 0 {
                println!("device_check: no device here (run with XC_DEVICE=emulated); skipped");
            }
            drop(world);
            std::process::exit(77);
        }
        Err(e) => {
            eprintln!("rank {rank}: mem_alloc_device with XC_DEVICE={device}: {e}");
            std::process::exit(1);
        }
        Ok(_) if device != "emulated" => {
            if rank == 0 {
                println!("device_check: reads device memory from the host: emulated device only; skipped");
            }
            drop(world);
            std::process::exit(77);
        }
        Ok(_) => {}
    }
    let mut c = Check {
        rank,
        checks: 0,
        failures: 0,
    };
    if let Err(e) = run(&world, &mut c) {
        eprintln!("rank {rank}: an xcomm call failed: {e}");
        std::process::exit(1);
    }
    if c.failures > 0 {
        eprintln!("rank {rank}: {} of {} checks FAILED", c.failures, c.checks);
        std::process::exit(1);
    }
    drop(world);
    if rank == 0 {
        println!("device_check: {} checks passed on rank 0", c.checks);
    }
}
