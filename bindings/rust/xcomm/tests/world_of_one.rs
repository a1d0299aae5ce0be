//! Single-process tests: without a launcher, `xcomm::init()` gives a world of
//! one, which is enough to run every operation (messages go to this rank).
//!
//! `xc_init` works once per process and the tests of this file share one
//! process (on several threads), so they share one world. Each test works on
//! its own `dup` of it, so that no test receives another test's messages.

#[path = "../../../../tests/bindings/rust/mp_check.rs"]
mod mp_check;

use std::sync::OnceLock;

use xcomm::{Comm, Config, Error, Op, Request, Source, Tag, UniqueId};

/// The process's world (never freed: statics are not dropped).
fn world() -> &'static Comm {
    static WORLD: OnceLock<Comm> = OnceLock::new();
    WORLD.get_or_init(|| xcomm::init().expect("init"))
}

/// A communicator of this test's own.
fn own_comm() -> Comm {
    world().dup().expect("dup")
}

#[test]
fn init_is_once_per_process() {
    let w = world();
    assert_eq!(
        (w.rank(), w.size(), w.local_rank(), w.local_size()),
        (0, 1, 0, 1)
    );
    let err = xcomm::init().expect_err("a second xcomm::init");
    assert_eq!(err.code, xcomm::sys::XC_ERR_INVALID_USAGE);
    assert!(err.message.contains("already"), "{err:?}");
}

#[test]
fn every_multi_rank_check_passes_on_a_world_of_one() {
    let world = own_comm();
    assert_eq!(
        (
            world.rank(),
            world.size(),
            world.local_rank(),
            world.local_size()
        ),
        (0, 1, 0, 1)
    );
    let report = mp_check::run(&world).expect("an xcomm call failed");
    assert_eq!(
        report.failures, 0,
        "{} of {} checks failed (see stderr)",
        report.failures, report.checks
    );
    assert!(report.checks > 500, "only {} checks ran", report.checks);
    world.free().expect("free");
}

#[test]
fn version_matches_the_header() {
    assert_eq!(xcomm::version(), xcomm::HEADER_VERSION);
}

#[test]
fn errors_carry_code_name_and_message() {
    let world = own_comm();
    let err = world
        .send(&[1.0f32], 3, 0)
        .expect_err("rank 3 of a world of one");
    assert_eq!(err.code, xcomm::sys::XC_ERR_INVALID_ARGUMENT);
    assert_eq!(err.name, "XC_ERR_INVALID_ARGUMENT");
    assert!(
        err.message.contains("peer rank 3 is out of range"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("XC_ERR_INVALID_ARGUMENT: {}", err.message)
    );
    assert!(!err.description().is_empty());
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
    assert!(boxed.to_string().starts_with("XC_ERR_INVALID_ARGUMENT"));

    let err = world
        .recv(&mut [0u8; 1], Source::Rank(-7), Tag::Any)
        .expect_err("rank -7");
    assert!(err.message.contains("XC_ANY_SOURCE"), "{err:?}");
    let err = world
        .allreduce(&[1u8; 2], &mut [0u8; 1], Op::Sum)
        .expect_err("lengths");
    assert!(
        err.message.contains("2") && err.message.contains("1"),
        "{err:?}"
    );
    let err = world.allgather_in_place(&mut [0u8; 0][..]).map(|_| ());
    assert!(err.is_ok(), "empty in-place allgather is fine: {err:?}");
    let err = world
        .allreduce_in_place(&mut [1.0f64], Op::Bxor)
        .expect_err("bitwise on f64");
    assert!(err.message.contains("bitwise"), "{err:?}");
    let err = world.split(-5, 0).expect_err("negative colour");
    assert!(err.message.contains("color"), "{err:?}");
    // A Rust-side error and every code have a name.
    assert_eq!(
        xcomm::code_name(xcomm::sys::XC_ERR_TIMEOUT),
        "XC_ERR_TIMEOUT"
    );
    assert_eq!(xcomm::code_name(-999), "XC_ERR_UNKNOWN");
    assert!(!xcomm::description(-999).is_empty());
}

#[test]
fn config_is_checked() {
    // Bad configs fail before xc_init's once-per-process check (so these do
    // not depend on the order the tests run in); a good one is used by
    // init_rank_with here and by mp_check's init_with under xcrun.
    let err = xcomm::init_with(&Config::new().name("a\0b")).expect_err("NUL in the name");
    assert_eq!(err.code, xcomm::sys::XC_ERR_INVALID_ARGUMENT);
    assert!(err.message.contains("NUL"), "{err:?}");
    let err =
        xcomm::init_with(&Config::new().device(xcomm::Device::Index(-9))).expect_err("device -9");
    assert!(err.message.contains("device"), "{err:?}");
    let cfg = Config::new()
        .name("named")
        .timeout_ms(5000)
        .device(xcomm::Device::None)
        .thread_mode(xcomm::ThreadMode::Multiple)
        .debug_level(xcomm::DebugLevel::Default);
    let id = UniqueId::new().expect("unique id");
    let comm = Comm::init_rank_with(1, &id, 0, &cfg).expect("init_rank_with options");
    assert_eq!(comm.size(), 1);
    comm.barrier().expect("barrier");
    let quick = comm
        .split_with(0, 0, &Config::new().timeout_ms(50).name("quick-one"))
        .expect("split_with")
        .expect("colour 0");
    let err = quick.recv(&mut [0u8], 0, 1).expect_err("nothing was sent");
    assert_eq!(err.code, xcomm::sys::XC_ERR_TIMEOUT);
    assert!(err.message.contains("quick-one"), "{err:?}");
}

#[test]
fn unique_id_round_trips_and_inits_a_comm_of_one() {
    let id = UniqueId::new().expect("unique id");
    let copy = UniqueId::from_bytes(id.as_bytes());
    assert_eq!(copy.as_bytes(), id.as_bytes());
    let comm = Comm::init_rank(1, &copy, 0).expect("init_rank");
    assert_eq!((comm.rank(), comm.size()), (0, 1));
    let err = Comm::init_rank(2, &id, 5).expect_err("rank 5 of 2");
    assert!(err.message.contains("out of range"), "{err:?}");
}

#[test]
fn a_leaked_request_is_waited_for_by_its_scope() {
    let world = own_comm();
    let out = [42u32; 1000];
    let mut inbox = [0u32; 1000];
    xcomm::scope(|s| {
        let r = world.irecv(s, &mut inbox, 0, 9).expect("irecv");
        std::mem::forget(r); // no Drop: the scope still waits for it
        world
            .isend(s, &out, 0, 9)
            .expect("isend")
            .wait()
            .expect("wait");
    });
    assert_eq!(inbox, [42u32; 1000]);
}

#[test]
fn types_are_send_and_sync_as_documented() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Comm>();
    send_sync::<Config>();
    send_sync::<Error>();
    send_sync::<UniqueId>();
    send::<Request<'static>>();
    // Request is not Sync: checked by a compile_fail doc test in lib.rs.
    send_sync::<xcomm::DeviceMemory>();
    send::<xcomm::Stream>();
    send::<xcomm::Registration<'static>>();
}

/// The device API answers on a world of one: without a device (no
/// XC_DEVICE, or a build without one) every entry point that needs one is
/// XC_ERR_UNSUPPORTED; with one, a stream, device memory and a registration
/// come and go. (tests/bindings/rust/device_check.rs runs ops on device
/// memory under XC_DEVICE=emulated.)
#[test]
fn device_api_answers_with_or_without_a_device() {
    use xcomm::{sys, Bind, Stream};
    let world = own_comm();
    match world.mem_alloc_device(64) {
        Err(e) => {
            assert_eq!(e.code, sys::XC_ERR_UNSUPPORTED, "{e:?}");
            assert!(!e.message.is_empty(), "{e:?}");
            let e = Stream::new(&world).expect_err("a stream without a device");
            assert_eq!(e.code, sys::XC_ERR_UNSUPPORTED, "{e:?}");
        }
        Ok(mem) => {
            assert_eq!(mem.len(), 64);
            assert!(!mem.as_ptr().is_null());
            let s = Stream::new(&world).expect("stream");
            world.bind_stream(Some(&s), Bind::Collectives).expect("bind");
            world.bind_stream(Some(&s), Bind::Peer(0)).expect("bind to a peer");
            s.synchronize().expect("synchronize");
            let reg = world.register_buffer(&mem).expect("register");
            reg.deregister().expect("deregister");
            world.bind_stream(None, Bind::Collectives).expect("unbind");
            s.destroy().expect("destroy");
            mem.free().expect("free");
        }
    }
    let e = world.bind_stream(None, Bind::Peer(-3)).expect_err("a negative peer");
    assert_eq!(e.code, sys::XC_ERR_INVALID_ARGUMENT);
}

#[test]
fn trace_dump_writes_the_recorder() {
    let c = own_comm();
    let mut v = [1.0f32; 4];
    for _ in 0..3 {
        c.allreduce_in_place(&mut v, Op::Sum).expect("allreduce");
    }
    let path = std::env::temp_dir().join(format!("xcomm-rust-trace-{}.jsonl", std::process::id()));
    c.trace_dump(Some(&path)).expect("trace_dump");
    let text = std::fs::read_to_string(&path).expect("the dump");
    std::fs::remove_file(&path).ok();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("{\"xcomm_trace\":1,"), "{}", lines[0]);
    assert_eq!(lines.len(), 4, "a header and 3 entries: {text}");
    for l in &lines[1..] {
        assert!(l.contains("\"op\":\"allreduce\"") && l.contains("\"state\":\"done\"") && l.contains("\"count\":4,"), "{l}");
    }
    if std::env::var_os("XC_TRACE_DIR").is_none() {
        let err = c.trace_dump(None).expect_err("no path and no XC_TRACE_DIR");
        assert_eq!(err.code, xcomm::sys::XC_ERR_INVALID_ARGUMENT);
        assert!(err.message.contains("XC_TRACE_DIR"), "{err:?}");
    }
    c.free().expect("free");
}
