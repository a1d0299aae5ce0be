//! Redistribution of sharded arrays: [`Layout`]s of a global array over a
//! communicator's ranks and [`Plan`]s that move an array from one layout to
//! another with the least data (`xc_layout_*`, `xc_redistribute*`,
//! `xc_plan_*`). Host memory only here (slices); the C functions also take
//! device memory, stream-ordered (docs/redistribution.md).

use std::marker::PhantomData;
use std::ptr;

use crate::buf::{cptr, mptr};
use crate::comm::Comm;
use crate::dtype::{Dtype, Op};
use crate::error::{check, Error, Result};
use crate::request::{Request, Scope};
use crate::sys;

/// One placement of a mesh dimension, as PyTorch DTensor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Every rank along the mesh dimension holds the same data.
    Replicate,
    /// This array dimension is split along the mesh dimension (torch.chunk's rule).
    Shard(i32),
    /// Each rank holds a partial value; the array is their reduction.
    Partial(Op),
}

impl Placement {
    fn raw(self) -> sys::xc_placement_t {
        let mut p = sys::xc_placement_t::default();
        match self {
            Placement::Replicate => p.kind = sys::XC_PLACEMENT_REPLICATE,
            Placement::Shard(d) => (p.kind, p.dim) = (sys::XC_PLACEMENT_SHARD, d),
            Placement::Partial(op) => (p.kind, p.op) = (sys::XC_PLACEMENT_PARTIAL, op.raw()),
        }
        p
    }
}

/// A ScaLAPACK-style block-cyclic descriptor (see `xc_layout_block_cyclic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockCyclic {
    pub rows: usize,
    pub cols: usize,
    pub mb: usize,
    pub nb: usize,
    pub nprow: i32,
    pub npcol: i32,
    pub rsrc: i32,
    pub csrc: i32,
    /// Rank of grid process (p, q) is q * nprow + p (else p * npcol + q).
    pub grid_col_major: bool,
    /// The local matrix is column-major, as ScaLAPACK stores it (else row-major).
    pub storage_col_major: bool,
}

/// How a global array lies over the ranks of a communicator; freed on `Drop`.
pub struct Layout<'c> {
    raw: sys::xc_layout_t,
    local_count: usize,
    _comm: PhantomData<&'c Comm>,
}

impl<'c> Layout<'c> {
    fn made(raw: sys::xc_layout_t) -> Result<Layout<'c>> {
        let mut n = 0usize;
        // SAFETY: raw is a layout just made; n is a valid out-pointer.
        if let Err(e) = check(unsafe { sys::xc_layout_local_count(raw, &mut n) }) {
            unsafe { sys::xc_layout_free(raw) };
            return Err(e);
        }
        Ok(Layout { raw, local_count: n, _comm: PhantomData })
    }

    /// Elements of this rank's local buffer.
    pub fn local_count(&self) -> usize {
        self.local_count
    }

    /// The C handle (still owned by this Layout).
    pub fn as_raw(&self) -> sys::xc_layout_t {
        self.raw
    }
}

impl Drop for Layout<'_> {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { sys::xc_layout_free(self.raw) };
    }
}

/// What one run of a plan moves for this rank (`xc_plan_info`).
pub type PlanInfo = sys::xc_plan_info_t;

/// A redistribution plan for arrays of `T`; run it any number of times.
/// Dropping it frees it, which is collective (every rank drops its plan).
pub struct Plan<'c, T: Dtype> {
    raw: sys::xc_plan_t,
    comm: &'c Comm,
    src_count: usize,
    dst_count: usize,
    _t: PhantomData<T>,
}

impl Comm {
    /// A layout of a global array of `global_shape` over a mesh of
    /// `mesh_shape` (the ranks in row-major order), one placement per mesh
    /// dimension.
    pub fn layout_mesh(&self, global_shape: &[usize], mesh_shape: &[i32], placements: &[Placement])
        -> Result<Layout<'_>> {
        if placements.len() != mesh_shape.len() {
            return Err(Error::invalid_argument(format!(
                "xc_layout_mesh: {} placements for a {}-dimensional mesh", placements.len(), mesh_shape.len())));
        }
        let pl: Vec<sys::xc_placement_t> = placements.iter().map(|p| p.raw()).collect();
        let mut out = ptr::null_mut();
        self.call(|| unsafe {
            sys::xc_layout_mesh(self.as_raw(), global_shape.len() as i32, global_shape.as_ptr(),
                                mesh_shape.len() as i32, mesh_shape.as_ptr(), pl.as_ptr(), &mut out)
        })?;
        Layout::made(out)
    }

    /// A general layout: boxes of (offsets, extents, owner); a rank's local
    /// buffer holds its boxes in list order, each row-major.
    pub fn layout_boxes(&self, global_shape: &[usize], boxes: &[(&[usize], &[usize], i32)]) -> Result<Layout<'_>> {
        let nd = global_shape.len();
        let (mut off, mut ext, mut own) = (Vec::new(), Vec::new(), Vec::new());
        for (o, e, w) in boxes {
            if o.len() != nd || e.len() != nd {
                return Err(Error::invalid_argument(format!("xc_layout_boxes: a box does not have {nd} dimensions")));
            }
            off.extend_from_slice(o);
            ext.extend_from_slice(e);
            own.push(*w);
        }
        let mut out = ptr::null_mut();
        self.call(|| unsafe {
            sys::xc_layout_boxes(self.as_raw(), nd as i32, global_shape.as_ptr(), boxes.len(), off.as_ptr(),
                                 ext.as_ptr(), own.as_ptr(), &mut out)
        })?;
        Layout::made(out)
    }

    /// A ScaLAPACK block-cyclic layout of a 2-D array.
    pub fn layout_block_cyclic(&self, d: &BlockCyclic) -> Result<Layout<'_>> {
        let order = |col: bool| if col { sys::XC_ORDER_COL_MAJOR } else { sys::XC_ORDER_ROW_MAJOR };
        let mut out = ptr::null_mut();
        self.call(|| unsafe {
            sys::xc_layout_block_cyclic(self.as_raw(), d.rows, d.cols, d.mb, d.nb, d.nprow, d.npcol, d.rsrc, d.csrc,
                                        order(d.grid_col_major), order(d.storage_col_major), &mut out)
        })?;
        Layout::made(out)
    }

    /// Plan moving arrays of `T` from `src` to `dst` (collective).
    /// `p2p_only`: never use collectives to move data.
    pub fn redistribute_plan<T: Dtype>(&self, src: &Layout<'_>, dst: &Layout<'_>, p2p_only: bool)
        -> Result<Plan<'_, T>> {
        let mut cfg = sys::xc_redist_config_t::default();
        check(unsafe { sys::xc_redist_config_init(&mut cfg, std::mem::size_of::<sys::xc_redist_config_t>()) })?;
        if p2p_only {
            cfg.flags = sys::XC_REDIST_P2P_ONLY as u32;
        }
        let mut out = ptr::null_mut();
        self.call(|| unsafe { sys::xc_redistribute_plan(src.raw, dst.raw, T::DTYPE, &cfg, &mut out) })?;
        Ok(Plan { raw: out, comm: self, src_count: src.local_count, dst_count: dst.local_count, _t: PhantomData })
    }
}

impl<'c, T: Dtype> Plan<'c, T> {
    fn check_lens(&self, send: usize, recv: usize) -> Result<()> {
        if send != self.src_count || recv != self.dst_count {
            return Err(Error::invalid_argument(format!(
                "xc_redistribute: buffers of {send} and {recv} elements, the layouts hold {} and {} here",
                self.src_count, self.dst_count)));
        }
        Ok(())
    }

    /// Run the plan (collective): `sendbuf` under src, `recvbuf` under dst.
    pub fn run(&self, sendbuf: &[T], recvbuf: &mut [T]) -> Result<()> {
        self.check_lens(sendbuf.len(), recvbuf.len())?;
        let (raw, send, recv) = (self.raw, cptr(sendbuf), mptr(recvbuf));
        self.comm.call(|| unsafe { sys::xc_redistribute(raw, send, recv) })
    }

    /// Non-blocking [`run`](Plan::run) inside a [`scope`](crate::scope).
    pub fn start<'s>(&'s self, scope: &'s Scope<'s, '_>, sendbuf: &'s [T], recvbuf: &'s mut [T])
        -> Result<Request<'s>> {
        self.check_lens(sendbuf.len(), recvbuf.len())?;
        let (raw, send, recv) = (self.raw, cptr(sendbuf), mptr(recvbuf));
        Request::start(scope, self.comm.serialized(), |req| unsafe { sys::xc_iredistribute(raw, send, recv, req) })
    }

    /// What one run moves for this rank.
    pub fn info(&self) -> Result<PlanInfo> {
        let mut i = PlanInfo { size: std::mem::size_of::<PlanInfo>(), ..Default::default() };
        check(unsafe { sys::xc_plan_info(self.raw, &mut i) })?;
        Ok(i)
    }

    /// COSTA's relabelling: (perm, bytes saved), perm[j] the rank that
    /// should take part j of dst.
    pub fn relabel(&self) -> Result<(Vec<i32>, u64)> {
        let mut perm = vec![0i32; self.comm.size() as usize];
        let mut saved = 0u64;
        check(unsafe { sys::xc_plan_relabel(self.raw, perm.as_mut_ptr(), &mut saved) })?;
        Ok((perm, saved))
    }

    /// Free the plan now (collective), with its result.
    pub fn free(self) -> Result<()> {
        let raw = self.raw;
        std::mem::forget(self);
        check(unsafe { sys::xc_plan_free(raw) })
    }
}

impl<T: Dtype> Drop for Plan<'_, T> {
    fn drop(&mut self) {
        // SAFETY: owned, freed once (free() forgets self).
        unsafe { sys::xc_plan_free(self.raw) };
    }
}
