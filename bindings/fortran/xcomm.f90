! xcomm.f90 -- the Fortran bindings of xcomm: module xcomm.
!
! Fortran 2018 (TS 29113 assumed-type and assumed-rank dummies), in the style
! of mpi_f08:
!  - every C function of include/xcomm.h has a Fortran procedure of the same
!    name, arguments in the C order, outputs last, then an optional ierr;
!  - handles are the derived types xc_comm and xc_request wrapping a
!    type(c_ptr) (component ptr); XC_COMM_NULL / XC_REQUEST_NULL and the
!    operators == and /= compare them;
!  - xc_status, xc_config and xc_unique_id are bind(c) mirrors of the C structs;
!  - ierr (integer, intent(out), optional): present, it receives the
!    xc_result_t and the program goes on; absent, an error (a negative result)
!    prints the routine, xc_strerror and xc_last_error() to stderr and stops
!    the program with "error stop" (as MPI's default error handler does; xcrun
!    then stops the other ranks);
!  - buffers are type(*), dimension(..): scalars and arrays of any rank and of
!    any type. The count is in elements of dtype, and either a default integer
!    or an integer(int64) (generic interfaces pick the kind). Blocking calls
!    accept non-contiguous sections (the compiler copies them in and out);
!    xc_isend and xc_irecv reject them with XC_ERR_INVALID_ARGUMENT, since a
!    copy would not outlive the call: their buffers should be contiguous and
!    declared ASYNCHRONOUS (or TARGET) by the caller, as with mpi_f08;
!  - in-place collectives: pass the module variable XC_IN_PLACE as sendbuf of
!    xc_allreduce or xc_allgather (mpi_f08's MPI_IN_PLACE: its address is
!    recognised and the C XC_IN_PLACE is passed instead). It is PROTECTED, so
!    passing it as a receive buffer does not compile; passed as any other send
!    buffer it is rejected with XC_ERR_INVALID_ARGUMENT;
!  - xc_mem_alloc gives a type(c_ptr) (c_null_ptr for 0 bytes or a failure),
!    to be viewed with c_f_pointer; xc_mem_free sets it to c_null_ptr on
!    success (as mpi_f08's MPI_Alloc_mem / MPI_Free_mem);
!  - device memory: xc_mem_alloc_device gives a type(c_ptr) to device memory
!    (freed with xc_mem_free). Pass it to any op as an array made with
!    c_f_pointer(ptr, x, shape), x declared POINTER, CONTIGUOUS: the ops take
!    the array's address and never read it from Fortran (only the emulated
!    device, XC_DEVICE=emulated, lets Fortran read or write its elements).
!    Without CONTIGUOUS, gfortran (12) passes a host copy of any pointer
!    array to the blocking calls' contiguous dummies, which reads device
!    memory on the host and moves the copy instead (the same holds for views
!    of xc_mem_alloc memory: the op then moves an ordinary copy). Device ops are stream-ordered (see the header): a
!    call has only enqueued the op when it returns; xc_stream_synchronize
!    waits for it. Streams (xc_stream) and registered buffers (xc_buffer)
!    are handle types like xc_comm; xc_stream_wrap takes the application's
!    cudaStream_t as a type(c_ptr); xc_stream_destroy and
!    xc_buffer_deregister set the handle to null, since the library
!    releases it whatever they return.
!
! Errors that the bindings detect themselves (negative count, XC_IN_PLACE
! misplaced, non-contiguous non-blocking buffer, too short arrays) return
! XC_ERR_INVALID_ARGUMENT without calling the library; xc_last_error() then
! returns the bindings' message until the next call into the library. That
! message is process-wide, not per thread.
module xcomm
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only : error_unit, int32, int64
  implicit none
  private

  ! ---- versions ------------------------------------------------------------
  integer, parameter, public :: XC_VERSION_MAJOR = 0
  integer, parameter, public :: XC_VERSION_MINOR = 2
  integer, parameter, public :: XC_VERSION_PATCH = 0
  integer, parameter, public :: XC_ABI_VERSION = 1

  ! ---- results (xc_result_t) -----------------------------------------------
  integer, parameter, public :: XC_SUCCESS = 0
  integer, parameter, public :: XC_IN_PROGRESS = 1
  integer, parameter, public :: XC_ERR_INVALID_ARGUMENT = -1
  integer, parameter, public :: XC_ERR_INVALID_USAGE = -2
  integer, parameter, public :: XC_ERR_NO_MEMORY = -3
  integer, parameter, public :: XC_ERR_SYSTEM = -4
  integer, parameter, public :: XC_ERR_TIMEOUT = -5
  integer, parameter, public :: XC_ERR_PEER_FAILED = -6
  integer, parameter, public :: XC_ERR_ABORTED = -7
  integer, parameter, public :: XC_ERR_UNSUPPORTED = -8
  integer, parameter, public :: XC_ERR_TRUNCATED = -9
  integer, parameter, public :: XC_ERR_CUDA = -10
  integer, parameter, public :: XC_ERR_NCCL = -11
  integer, parameter, public :: XC_ERR_INTERNAL = -12
  integer, parameter, public :: XC_ERR_REVOKED = -13

  ! ---- data types (xc_dtype_t) ---------------------------------------------
  integer, parameter, public :: XC_INT8 = 0
  integer, parameter, public :: XC_UINT8 = 1
  integer, parameter, public :: XC_INT32 = 2
  integer, parameter, public :: XC_UINT32 = 3
  integer, parameter, public :: XC_INT64 = 4
  integer, parameter, public :: XC_UINT64 = 5
  integer, parameter, public :: XC_FLOAT16 = 6
  integer, parameter, public :: XC_BFLOAT16 = 7
  integer, parameter, public :: XC_FLOAT32 = 8
  integer, parameter, public :: XC_FLOAT64 = 9

  ! ---- reductions (xc_op_t) ------------------------------------------------
  integer, parameter, public :: XC_SUM = 0
  integer, parameter, public :: XC_PROD = 1
  integer, parameter, public :: XC_MIN = 2
  integer, parameter, public :: XC_MAX = 3
  integer, parameter, public :: XC_AVG = 4
  integer, parameter, public :: XC_BAND = 5
  integer, parameter, public :: XC_BOR = 6
  integer, parameter, public :: XC_BXOR = 7

  ! ---- configuration -------------------------------------------------------
  integer, parameter, public :: XC_CONFIG_VERSION = 1
  integer, parameter, public :: XC_DEVICE_AUTO = -1
  integer, parameter, public :: XC_DEVICE_NONE = -2
  integer, parameter, public :: XC_THREAD_DEFAULT = 0
  integer, parameter, public :: XC_THREAD_SERIALIZED = 1
  integer, parameter, public :: XC_THREAD_MULTIPLE = 2
  integer, parameter, public :: XC_DEBUG_DEFAULT = 0
  integer, parameter, public :: XC_DEBUG_NONE = 1
  integer, parameter, public :: XC_DEBUG_WARN = 2
  integer, parameter, public :: XC_DEBUG_INFO = 3
  integer, parameter, public :: XC_DEBUG_TRACE = 4

  ! ---- communicators and point to point --------------------------------------
  integer, parameter, public :: XC_UNDEFINED = -32766
  integer, parameter, public :: XC_ANY_SOURCE = -1
  integer, parameter, public :: XC_ANY_TAG = -1
  integer, parameter, public :: XC_TAG_MAX = huge(0_int32)

  ! ---- device memory and streams ----------------------------------------------
  !> xc_stream_bind target: the communicator's collectives (else a peer rank).
  integer, parameter, public :: XC_BIND_COLLECTIVES = -1

  ! ---- redistribution of sharded arrays ------------------------------------------
  ! Layouts describe a C (row-major) global array: a Fortran array a(n1, n2)
  ! is the C array [n2][n1], so give its shape reversed. Block-cyclic local
  ! matrices with storage XC_ORDER_COL_MAJOR are ScaLAPACK's (Fortran) ones.
  integer, parameter, public :: XC_LAYOUT_MAX_DIMS = 8
  integer, parameter, public :: XC_REDIST_TAG = 2147442397
  integer, parameter, public :: XC_PLACEMENT_REPLICATE = 0
  integer, parameter, public :: XC_PLACEMENT_SHARD = 1
  integer, parameter, public :: XC_PLACEMENT_PARTIAL = 2
  integer, parameter, public :: XC_ORDER_ROW_MAJOR = 0
  integer, parameter, public :: XC_ORDER_COL_MAJOR = 1
  integer, parameter, public :: XC_REDIST_CONFIG_VERSION = 1
  integer, parameter, public :: XC_REDIST_P2P_ONLY = 1
  integer, parameter, public :: XC_REDIST_STEP_COPY = 1
  integer, parameter, public :: XC_REDIST_STEP_P2P = 2
  integer, parameter, public :: XC_REDIST_STEP_ALLGATHER = 4
  integer, parameter, public :: XC_REDIST_STEP_ALLTOALL = 8
  integer, parameter, public :: XC_REDIST_STEP_REDUCE_SCATTER = 16
  integer, parameter, public :: XC_REDIST_STEP_ALLREDUCE = 32
  integer, parameter, public :: XC_REDIST_STEP_FILL = 64
  integer, parameter, public :: XC_PLAN_INFO_VERSION = 1

  ! ---- types -----------------------------------------------------------------
  !> A communicator (xc_comm_t). Default: null.
  type, bind(c), public :: xc_comm
    type(c_ptr) :: ptr = c_null_ptr
  end type xc_comm

  !> A non-blocking request (xc_request_t). Default: null. An array of them
  !> has the layout of a C array of xc_request_t.
  type, bind(c), public :: xc_request
    type(c_ptr) :: ptr = c_null_ptr
  end type xc_request

  !> A stream of device work (xc_stream_t). Default: null.
  type, bind(c), public :: xc_stream
    type(c_ptr) :: ptr = c_null_ptr
  end type xc_stream

  !> A registered device buffer (xc_buffer_t). Default: null.
  type, bind(c), public :: xc_buffer
    type(c_ptr) :: ptr = c_null_ptr
  end type xc_buffer

  !> How a global array lies over a communicator's ranks (xc_layout_t).
  type, bind(c), public :: xc_layout
    type(c_ptr) :: ptr = c_null_ptr
  end type xc_layout

  !> A redistribution plan (xc_plan_t).
  type, bind(c), public :: xc_plan
    type(c_ptr) :: ptr = c_null_ptr
  end type xc_plan

  !> xc_placement_t: kind XC_PLACEMENT_*; dim (0-based C dimension) for a
  !> shard; op (XC_SUM, ...) for a partial.
  type, bind(c), public :: xc_placement
    integer(c_int32_t) :: kind = XC_PLACEMENT_REPLICATE
    integer(c_int32_t) :: dim = 0
    integer(c_int32_t) :: op = 0
    integer(c_int32_t) :: reserved = 0
  end type xc_placement

  !> xc_redist_config_t: fill with xc_redist_config_init.
  type, bind(c), public :: xc_redist_config
    integer(c_size_t) :: size = 0
    integer(c_int32_t) :: version = XC_REDIST_CONFIG_VERSION
    integer(c_int32_t) :: flags = 0
  end type xc_redist_config

  !> xc_plan_info_t, under its C name (Fortran names are case-blind, so it
  !> cannot share the name of the subroutine xc_plan_info, which sets size).
  type, bind(c), public :: xc_plan_info_t
    integer(c_size_t) :: size = 0
    integer(c_int32_t) :: version = 0
    integer(c_int32_t) :: step_kinds = 0
    integer(c_int64_t) :: bytes_sent = 0
    integer(c_int64_t) :: bytes_received = 0
    integer(c_int64_t) :: bytes_copied = 0
    integer(c_int64_t) :: lower_bound_bytes = 0
    integer(c_int64_t) :: messages_sent = 0
    integer(c_int64_t) :: messages_received = 0
    integer(c_int32_t) :: collective_steps = 0
    integer(c_int32_t) :: p2p_steps = 0
  end type xc_plan_info_t

  !> xc_status_t. The default value is the empty status.
  type, bind(c), public :: xc_status
    integer(c_int) :: source = XC_ANY_SOURCE
    integer(c_int) :: tag = XC_ANY_TAG
    integer(c_int) :: error = XC_SUCCESS
    integer(c_int) :: reserved = 0
    integer(c_size_t) :: bytes = 0
  end type xc_status

  !> xc_config_t. Start from XC_CONFIG_DEFAULT or call xc_config_init. name is
  !> NULL or the c_loc of a NUL-terminated character(kind=c_char) target; the
  !> library copies it during the call that takes the config.
  type, bind(c), public :: xc_config
    integer(c_size_t) :: size = 0
    integer(c_int32_t) :: version = XC_CONFIG_VERSION
    integer(c_int32_t) :: device = XC_DEVICE_AUTO
    integer(c_int64_t) :: timeout_ms = 0
    integer(c_int32_t) :: thread_mode = XC_THREAD_DEFAULT
    integer(c_int32_t) :: debug_level = XC_DEBUG_DEFAULT
    type(c_ptr) :: name = c_null_ptr
    !> Non-zero: make the NCCL communicator at the first device op (xcomm.h).
    integer(c_int32_t) :: nccl_lazy = 0
  end type xc_config

  !> xc_unique_id_t: 128 opaque bytes, sent to every rank by the caller.
  type, bind(c), public :: xc_unique_id
    character(kind=c_char) :: internal(128) = c_null_char
  end type xc_unique_id

  !> The type of XC_IN_PLACE (nothing else has it).
  type, bind(c), public :: xc_in_place_t
    integer(c_int) :: unused = 0
  end type xc_in_place_t

  type(xc_comm), parameter, public :: XC_COMM_NULL = xc_comm(c_null_ptr)
  type(xc_request), parameter, public :: XC_REQUEST_NULL = xc_request(c_null_ptr)
  type(xc_stream), parameter, public :: XC_STREAM_NULL = xc_stream(c_null_ptr)
  type(xc_buffer), parameter, public :: XC_BUFFER_NULL = xc_buffer(c_null_ptr)
  !> sizeof(xc_config_t), and the C XC_CONFIG_INIT (Fortran names are case-blind,
  !> so it cannot share the name of the subroutine xc_config_init).
  integer(c_size_t), parameter, public :: XC_CONFIG_SIZE = c_sizeof(xc_config())
  type(xc_config), parameter, public :: XC_CONFIG_DEFAULT = xc_config(size=XC_CONFIG_SIZE)

  !> Pass as sendbuf of xc_allreduce / xc_allgather for the in-place variant.
  type(xc_in_place_t), target, save, protected, public :: XC_IN_PLACE

  ! ---- the bindings' own error message (see the header comment) -------------
  character(len=512), save :: binding_msg = ''
  logical, save :: binding_msg_set = .false.

  ! ---- public procedures -------------------------------------------------------
  public :: xc_get_version, xc_strerror, xc_last_error, xc_dtype_size, xc_config_init
  public :: xc_init, xc_get_unique_id, xc_comm_init_rank, xc_comm_free, xc_comm_abort
  public :: xc_comm_rank, xc_comm_size, xc_comm_local_rank, xc_comm_local_size
  public :: xc_comm_get_async_error, xc_comm_split, xc_comm_split_groups, xc_comm_dup
  public :: xc_comm_create_group, xc_comm_trace_dump
  public :: xc_comm_revoke, xc_comm_agree, xc_comm_get_failed, xc_comm_shrink, xc_comm_grow
  public :: xc_send, xc_recv, xc_sendrecv, xc_isend, xc_irecv, xc_wait, xc_test, xc_waitall
  public :: xc_barrier, xc_broadcast, xc_allreduce, xc_allgather
  public :: xc_reduce, xc_allgatherv, xc_gather, xc_gatherv, xc_scatter, xc_scatterv, xc_reduce_scatter
  public :: xc_reduce_scatterv, xc_alltoall, xc_alltoallv, xc_scan, xc_exscan, xc_ibarrier, xc_ibroadcast
  public :: xc_ireduce, xc_iallreduce, xc_iallgather, xc_iallgatherv, xc_igather, xc_igatherv, xc_iscatter
  public :: xc_iscatterv, xc_ireduce_scatter, xc_ireduce_scatterv, xc_ialltoall, xc_ialltoallv, xc_iscan
  public :: xc_iexscan, xc_group_start, xc_group_end
  public :: xc_mem_alloc, xc_mem_free
  public :: xc_stream_create, xc_stream_wrap, xc_stream_destroy, xc_stream_synchronize, xc_stream_bind
  public :: xc_mem_alloc_device, xc_buffer_register, xc_buffer_deregister
  public :: xc_layout_boxes, xc_layout_mesh, xc_layout_block_cyclic, xc_layout_local_count, xc_layout_free
  public :: xc_redist_config_init, xc_redistribute_plan, xc_redistribute, xc_iredistribute
  public :: xc_plan_info, xc_plan_relabel, xc_plan_free
  public :: operator(==), operator(/=)

  interface operator(==)
    module procedure comm_eq, request_eq, stream_eq, buffer_eq
  end interface
  interface operator(/=)
    module procedure comm_ne, request_ne, stream_ne, buffer_ne
  end interface

  ! Optional configs and statuses are told apart by generic resolution, so
  ! ierr can always be passed by position:
  !   call xc_init(world [, ierr])          call xc_init(cfg, world [, ierr])
  !   call xc_recv(buf, n, dt, src, tag, comm [, ierr])
  !   call xc_recv(buf, n, dt, src, tag, comm, status [, ierr])
  interface xc_init
    module procedure xc_init_nocfg, xc_init_cfg
  end interface
  interface xc_comm_init_rank
    module procedure xc_comm_init_rank_nocfg, xc_comm_init_rank_cfg
  end interface
  interface xc_comm_split
    module procedure xc_comm_split_nocfg, xc_comm_split_cfg
  end interface
  interface xc_redistribute_plan
    module procedure xc_redistribute_plan_nocfg, xc_redistribute_plan_cfg
  end interface
  interface xc_comm_shrink
    module procedure xc_comm_shrink_nocfg, xc_comm_shrink_cfg
  end interface
  interface xc_comm_grow
    module procedure xc_comm_grow_nocfg, xc_comm_grow_cfg
  end interface
  interface xc_comm_split_groups
    module procedure xc_comm_split_groups_nocfg, xc_comm_split_groups_cfg
  end interface
  interface xc_comm_create_group
    module procedure xc_comm_create_group_nocfg, xc_comm_create_group_cfg
  end interface
  interface xc_send
    module procedure xc_send_i4, xc_send_i8
  end interface
  interface xc_recv
    module procedure xc_recv_i4, xc_recv_i8, xc_recv_i4_st, xc_recv_i8_st
  end interface
  interface xc_sendrecv
    module procedure xc_sendrecv_i4, xc_sendrecv_i8, xc_sendrecv_i4_st, xc_sendrecv_i8_st
  end interface
  interface xc_isend
    module procedure xc_isend_i4, xc_isend_i8
  end interface
  interface xc_irecv
    module procedure xc_irecv_i4, xc_irecv_i8
  end interface
  interface xc_wait
    module procedure xc_wait_nost, xc_wait_st
  end interface
  interface xc_test
    module procedure xc_test_nost, xc_test_st
  end interface
  interface xc_waitall
    module procedure xc_waitall_nost, xc_waitall_st
  end interface
  interface xc_broadcast
    module procedure xc_broadcast_i4, xc_broadcast_i8
  end interface
  interface xc_allreduce
    module procedure xc_allreduce_i4, xc_allreduce_i8
  end interface
  interface xc_allgather
    module procedure xc_allgather_i4, xc_allgather_i8
  end interface
  interface xc_reduce
    module procedure xc_reduce_i4, xc_reduce_i8
  end interface
  interface xc_allgatherv
    module procedure xc_allgatherv_i4, xc_allgatherv_i8
  end interface
  interface xc_gather
    module procedure xc_gather_i4, xc_gather_i8
  end interface
  interface xc_gatherv
    module procedure xc_gatherv_i4, xc_gatherv_i8
  end interface
  interface xc_scatter
    module procedure xc_scatter_i4, xc_scatter_i8
  end interface
  interface xc_scatterv
    module procedure xc_scatterv_i4, xc_scatterv_i8
  end interface
  interface xc_reduce_scatter
    module procedure xc_reduce_scatter_i4, xc_reduce_scatter_i8
  end interface
  interface xc_alltoall
    module procedure xc_alltoall_i4, xc_alltoall_i8
  end interface
  interface xc_scan
    module procedure xc_scan_i4, xc_scan_i8
  end interface
  interface xc_exscan
    module procedure xc_exscan_i4, xc_exscan_i8
  end interface
  interface xc_ibroadcast
    module procedure xc_ibroadcast_i4, xc_ibroadcast_i8
  end interface
  interface xc_ireduce
    module procedure xc_ireduce_i4, xc_ireduce_i8
  end interface
  interface xc_iallreduce
    module procedure xc_iallreduce_i4, xc_iallreduce_i8
  end interface
  interface xc_iallgather
    module procedure xc_iallgather_i4, xc_iallgather_i8
  end interface
  interface xc_iallgatherv
    module procedure xc_iallgatherv_i4, xc_iallgatherv_i8
  end interface
  interface xc_igather
    module procedure xc_igather_i4, xc_igather_i8
  end interface
  interface xc_igatherv
    module procedure xc_igatherv_i4, xc_igatherv_i8
  end interface
  interface xc_iscatter
    module procedure xc_iscatter_i4, xc_iscatter_i8
  end interface
  interface xc_iscatterv
    module procedure xc_iscatterv_i4, xc_iscatterv_i8
  end interface
  interface xc_ireduce_scatter
    module procedure xc_ireduce_scatter_i4, xc_ireduce_scatter_i8
  end interface
  interface xc_ialltoall
    module procedure xc_ialltoall_i4, xc_ialltoall_i8
  end interface
  interface xc_iscan
    module procedure xc_iscan_i4, xc_iscan_i8
  end interface
  interface xc_iexscan
    module procedure xc_iexscan_i4, xc_iexscan_i8
  end interface
  interface xc_mem_alloc
    module procedure xc_mem_alloc_i4, xc_mem_alloc_i8
  end interface
  interface xc_mem_alloc_device
    module procedure xc_mem_alloc_device_i4, xc_mem_alloc_device_i8
  end interface
  interface xc_buffer_register
    module procedure xc_buffer_register_i4, xc_buffer_register_i8
  end interface

  ! ---- the C API (include/xcomm.h), one interface per function ---------------
  interface
    integer(c_int) function c_xc_get_version(major, minor, patch) bind(c, name='xc_get_version')
      import :: c_int
      integer(c_int), intent(out), optional :: major, minor, patch
    end function c_xc_get_version

    type(c_ptr) function c_xc_strerror(result) bind(c, name='xc_strerror')
      import :: c_ptr, c_int
      integer(c_int), value :: result
    end function c_xc_strerror

    type(c_ptr) function c_xc_last_error() bind(c, name='xc_last_error')
      import :: c_ptr
    end function c_xc_last_error

    integer(c_size_t) function c_xc_dtype_size(dtype) bind(c, name='xc_dtype_size')
      import :: c_size_t, c_int
      integer(c_int), value :: dtype
    end function c_xc_dtype_size

    integer(c_int) function c_xc_config_init(cfg, size) bind(c, name='xc_config_init')
      import :: c_int, c_size_t, xc_config
      type(xc_config), intent(inout) :: cfg
      integer(c_size_t), value :: size
    end function c_xc_config_init

    integer(c_int) function c_xc_init(cfg, world) bind(c, name='xc_init')
      import :: c_int, xc_config, xc_comm
      type(xc_config), intent(in), optional :: cfg
      type(xc_comm), intent(inout) :: world
    end function c_xc_init

    integer(c_int) function c_xc_get_unique_id(id) bind(c, name='xc_get_unique_id')
      import :: c_int, xc_unique_id
      type(xc_unique_id), intent(inout) :: id
    end function c_xc_get_unique_id

    integer(c_int) function c_xc_comm_init_rank(nranks, id, rank, cfg, comm) bind(c, name='xc_comm_init_rank')
      import :: c_int, xc_unique_id, xc_config, xc_comm
      integer(c_int), value :: nranks
      type(xc_unique_id), intent(in) :: id
      integer(c_int), value :: rank
      type(xc_config), intent(in), optional :: cfg
      type(xc_comm), intent(inout) :: comm
    end function c_xc_comm_init_rank

    integer(c_int) function c_xc_comm_free(comm) bind(c, name='xc_comm_free')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
    end function c_xc_comm_free

    integer(c_int) function c_xc_comm_abort(comm) bind(c, name='xc_comm_abort')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
    end function c_xc_comm_abort

    integer(c_int) function c_xc_comm_rank(comm, rank) bind(c, name='xc_comm_rank')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(inout) :: rank
    end function c_xc_comm_rank

    integer(c_int) function c_xc_comm_size(comm, size) bind(c, name='xc_comm_size')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(inout) :: size
    end function c_xc_comm_size

    integer(c_int) function c_xc_comm_local_rank(comm, rank) bind(c, name='xc_comm_local_rank')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(inout) :: rank
    end function c_xc_comm_local_rank

    integer(c_int) function c_xc_comm_local_size(comm, size) bind(c, name='xc_comm_local_size')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(inout) :: size
    end function c_xc_comm_local_size

    integer(c_int) function c_xc_comm_get_async_error(comm, err) bind(c, name='xc_comm_get_async_error')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(inout) :: err
    end function c_xc_comm_get_async_error

    integer(c_int) function c_xc_comm_split(parent, color, key, cfg, out) bind(c, name='xc_comm_split')
      import :: c_int, c_ptr, xc_config, xc_comm
      type(c_ptr), value :: parent
      integer(c_int), value :: color, key
      type(xc_config), intent(in), optional :: cfg
      type(xc_comm), intent(inout) :: out
    end function c_xc_comm_split

    integer(c_int) function c_xc_comm_split_groups(parent, ngroups, group_sizes, ranks, cfg, out) &
        bind(c, name='xc_comm_split_groups')
      import :: c_int, c_ptr, xc_config, xc_comm
      type(c_ptr), value :: parent
      integer(c_int), value :: ngroups
      integer(c_int), intent(in) :: group_sizes(*), ranks(*)
      type(xc_config), intent(in), optional :: cfg
      type(xc_comm), intent(inout) :: out
    end function c_xc_comm_split_groups

    integer(c_int) function c_xc_comm_create_group(parent, n, ranks, tag, cfg, out) &
        bind(c, name='xc_comm_create_group')
      import :: c_int, c_ptr, xc_config, xc_comm
      type(c_ptr), value :: parent
      integer(c_int), value :: n
      integer(c_int), intent(in) :: ranks(*)
      integer(c_int), value :: tag
      type(xc_config), intent(in), optional :: cfg
      type(xc_comm), intent(inout) :: out
    end function c_xc_comm_create_group

    integer(c_int) function c_xc_comm_dup(comm, out) bind(c, name='xc_comm_dup')
      import :: c_int, c_ptr, xc_comm
      type(c_ptr), value :: comm
      type(xc_comm), intent(inout) :: out
    end function c_xc_comm_dup

    integer(c_int) function c_xc_comm_revoke(comm) bind(c, name='xc_comm_revoke')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
    end function c_xc_comm_revoke

    integer(c_int) function c_xc_comm_trace_dump(comm, path) bind(c, name='xc_comm_trace_dump')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: path
    end function c_xc_comm_trace_dump

    integer(c_int) function c_xc_comm_agree(comm, flag) bind(c, name='xc_comm_agree')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(inout) :: flag
    end function c_xc_comm_agree

    integer(c_int) function c_xc_comm_get_failed(comm, n, ranks) bind(c, name='xc_comm_get_failed')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      integer(c_int), intent(inout) :: n
      integer(c_int), intent(inout), optional :: ranks(*)
    end function c_xc_comm_get_failed

    integer(c_int) function c_xc_comm_shrink(comm, cfg, out) bind(c, name='xc_comm_shrink')
      import :: c_int, c_ptr, xc_config, xc_comm
      type(c_ptr), value :: comm
      type(xc_config), intent(in), optional :: cfg
      type(xc_comm), intent(inout) :: out
    end function c_xc_comm_shrink

    integer(c_int) function c_xc_comm_grow(comm, nnew, id, cfg, out) bind(c, name='xc_comm_grow')
      import :: c_int, c_ptr, xc_unique_id, xc_config, xc_comm
      type(c_ptr), value :: comm
      integer(c_int), value :: nnew
      type(xc_unique_id), intent(in), optional :: id
      type(xc_config), intent(in), optional :: cfg
      type(xc_comm), intent(inout) :: out
    end function c_xc_comm_grow

    integer(c_int) function c_xc_send(buf, count, dtype, peer, tag, comm) bind(c, name='xc_send')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, peer, tag
      type(c_ptr), value :: comm
    end function c_xc_send

    integer(c_int) function c_xc_recv(buf, count, dtype, peer, tag, comm, status) bind(c, name='xc_recv')
      import :: c_int, c_ptr, c_size_t, xc_status
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, peer, tag
      type(c_ptr), value :: comm
      type(xc_status), intent(inout), optional :: status
    end function c_xc_recv

    integer(c_int) function c_xc_sendrecv(sendbuf, sendcount, dest, sendtag, recvbuf, recvcount, source, &
                                          recvtag, dtype, comm, status) bind(c, name='xc_sendrecv')
      import :: c_int, c_ptr, c_size_t, xc_status
      type(c_ptr), value :: sendbuf
      integer(c_size_t), value :: sendcount
      integer(c_int), value :: dest, sendtag
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: recvcount
      integer(c_int), value :: source, recvtag, dtype
      type(c_ptr), value :: comm
      type(xc_status), intent(inout), optional :: status
    end function c_xc_sendrecv

    integer(c_int) function c_xc_isend(buf, count, dtype, peer, tag, comm, req) bind(c, name='xc_isend')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, peer, tag
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_isend

    integer(c_int) function c_xc_irecv(buf, count, dtype, peer, tag, comm, req) bind(c, name='xc_irecv')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, peer, tag
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_irecv

    integer(c_int) function c_xc_wait(req, status) bind(c, name='xc_wait')
      import :: c_int, xc_request, xc_status
      type(xc_request), intent(inout) :: req
      type(xc_status), intent(inout), optional :: status
    end function c_xc_wait

    integer(c_int) function c_xc_test(req, done, status) bind(c, name='xc_test')
      import :: c_int, xc_request, xc_status
      type(xc_request), intent(inout) :: req
      integer(c_int), intent(inout) :: done
      type(xc_status), intent(inout), optional :: status
    end function c_xc_test

    integer(c_int) function c_xc_waitall(n, reqs, statuses) bind(c, name='xc_waitall')
      import :: c_int, c_size_t, xc_request, xc_status
      integer(c_size_t), value :: n
      type(xc_request), intent(inout) :: reqs(*)
      type(xc_status), intent(inout), optional :: statuses(*)
    end function c_xc_waitall

    integer(c_int) function c_xc_barrier(comm) bind(c, name='xc_barrier')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
    end function c_xc_barrier

    integer(c_int) function c_xc_broadcast(buf, count, dtype, root, comm) bind(c, name='xc_broadcast')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, root
      type(c_ptr), value :: comm
    end function c_xc_broadcast

    integer(c_int) function c_xc_allreduce(sendbuf, recvbuf, count, dtype, op, comm) bind(c, name='xc_allreduce')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf, recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype, op
      type(c_ptr), value :: comm
    end function c_xc_allreduce

    integer(c_int) function c_xc_allgather(sendbuf, recvbuf, sendcount, dtype, comm) bind(c, name='xc_allgather')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf, recvbuf
      integer(c_size_t), value :: sendcount
      integer(c_int), value :: dtype
      type(c_ptr), value :: comm
    end function c_xc_allgather

    integer(c_int) function c_xc_reduce(sendbuf, recvbuf, count, dtype, op, root, comm) &
        bind(c, name='xc_reduce')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      integer(c_int), value :: root
      type(c_ptr), value :: comm
    end function c_xc_reduce

    integer(c_int) function c_xc_allgatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, comm) &
        bind(c, name='xc_allgatherv')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      integer(c_size_t), value :: sendcount
      type(c_ptr), value :: recvbuf
      integer(c_size_t), intent(in) :: recvcounts(*)
      integer(c_size_t), intent(in) :: displs(*)
      integer(c_int), value :: dtype
      type(c_ptr), value :: comm
    end function c_xc_allgatherv

    integer(c_int) function c_xc_gather(sendbuf, recvbuf, sendcount, dtype, root, comm) &
        bind(c, name='xc_gather')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: sendcount
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
    end function c_xc_gather

    integer(c_int) function c_xc_gatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm) &
        bind(c, name='xc_gatherv')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      integer(c_size_t), value :: sendcount
      type(c_ptr), value :: recvbuf
      integer(c_size_t), intent(in) :: recvcounts(*)
      integer(c_size_t), intent(in) :: displs(*)
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
    end function c_xc_gatherv

    integer(c_int) function c_xc_scatter(sendbuf, recvbuf, recvcount, dtype, root, comm) &
        bind(c, name='xc_scatter')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: recvcount
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
    end function c_xc_scatter

    integer(c_int) function c_xc_scatterv(sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm) &
        bind(c, name='xc_scatterv')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      integer(c_size_t), intent(in) :: sendcounts(*)
      integer(c_size_t), intent(in) :: displs(*)
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: recvcount
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
    end function c_xc_scatterv

    integer(c_int) function c_xc_reduce_scatter(sendbuf, recvbuf, recvcount, dtype, op, comm) &
        bind(c, name='xc_reduce_scatter')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: recvcount
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
    end function c_xc_reduce_scatter

    integer(c_int) function c_xc_reduce_scatterv(sendbuf, recvbuf, recvcounts, dtype, op, comm) &
        bind(c, name='xc_reduce_scatterv')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), intent(in) :: recvcounts(*)
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
    end function c_xc_reduce_scatterv

    integer(c_int) function c_xc_alltoall(sendbuf, recvbuf, count, dtype, comm) &
        bind(c, name='xc_alltoall')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      type(c_ptr), value :: comm
    end function c_xc_alltoall

    integer(c_int) function c_xc_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, comm) &
        bind(c, name='xc_alltoallv')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      integer(c_size_t), intent(in) :: sendcounts(*)
      integer(c_size_t), intent(in) :: sdispls(*)
      type(c_ptr), value :: recvbuf
      integer(c_size_t), intent(in) :: recvcounts(*)
      integer(c_size_t), intent(in) :: rdispls(*)
      integer(c_int), value :: dtype
      type(c_ptr), value :: comm
    end function c_xc_alltoallv

    integer(c_int) function c_xc_scan(sendbuf, recvbuf, count, dtype, op, comm) &
        bind(c, name='xc_scan')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
    end function c_xc_scan

    integer(c_int) function c_xc_exscan(sendbuf, recvbuf, count, dtype, op, comm) &
        bind(c, name='xc_exscan')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
    end function c_xc_exscan

    integer(c_int) function c_xc_ibarrier(comm, req) &
        bind(c, name='xc_ibarrier')
      import :: c_int, c_ptr, xc_request
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_ibarrier

    integer(c_int) function c_xc_ibroadcast(buf, count, dtype, root, comm, req) &
        bind(c, name='xc_ibroadcast')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: buf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_ibroadcast

    integer(c_int) function c_xc_ireduce(sendbuf, recvbuf, count, dtype, op, root, comm, req) &
        bind(c, name='xc_ireduce')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      integer(c_int), value :: root
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_ireduce

    integer(c_int) function c_xc_iallreduce(sendbuf, recvbuf, count, dtype, op, comm, req) &
        bind(c, name='xc_iallreduce')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_iallreduce

    integer(c_int) function c_xc_iallgather(sendbuf, recvbuf, sendcount, dtype, comm, req) &
        bind(c, name='xc_iallgather')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: sendcount
      integer(c_int), value :: dtype
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_iallgather

    integer(c_int) function c_xc_iallgatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, comm, req) &
        bind(c, name='xc_iallgatherv')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      integer(c_size_t), value :: sendcount
      type(c_ptr), value :: recvbuf
      integer(c_size_t), intent(in) :: recvcounts(*)
      integer(c_size_t), intent(in) :: displs(*)
      integer(c_int), value :: dtype
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_iallgatherv

    integer(c_int) function c_xc_igather(sendbuf, recvbuf, sendcount, dtype, root, comm, req) &
        bind(c, name='xc_igather')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: sendcount
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_igather

    integer(c_int) function c_xc_igatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm, req) &
        bind(c, name='xc_igatherv')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      integer(c_size_t), value :: sendcount
      type(c_ptr), value :: recvbuf
      integer(c_size_t), intent(in) :: recvcounts(*)
      integer(c_size_t), intent(in) :: displs(*)
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_igatherv

    integer(c_int) function c_xc_iscatter(sendbuf, recvbuf, recvcount, dtype, root, comm, req) &
        bind(c, name='xc_iscatter')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: recvcount
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_iscatter

    integer(c_int) function c_xc_iscatterv(sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm, req) &
        bind(c, name='xc_iscatterv')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      integer(c_size_t), intent(in) :: sendcounts(*)
      integer(c_size_t), intent(in) :: displs(*)
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: recvcount
      integer(c_int), value :: dtype
      integer(c_int), value :: root
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_iscatterv

    integer(c_int) function c_xc_ireduce_scatter(sendbuf, recvbuf, recvcount, dtype, op, comm, req) &
        bind(c, name='xc_ireduce_scatter')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: recvcount
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_ireduce_scatter

    integer(c_int) function c_xc_ireduce_scatterv(sendbuf, recvbuf, recvcounts, dtype, op, comm, req) &
        bind(c, name='xc_ireduce_scatterv')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), intent(in) :: recvcounts(*)
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_ireduce_scatterv

    integer(c_int) function c_xc_ialltoall(sendbuf, recvbuf, count, dtype, comm, req) &
        bind(c, name='xc_ialltoall')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_ialltoall

    integer(c_int) function c_xc_ialltoallv(sendbuf, sendcounts, sdispls, recvbuf, &
        recvcounts, rdispls, dtype, comm, req) &
        bind(c, name='xc_ialltoallv')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      integer(c_size_t), intent(in) :: sendcounts(*)
      integer(c_size_t), intent(in) :: sdispls(*)
      type(c_ptr), value :: recvbuf
      integer(c_size_t), intent(in) :: recvcounts(*)
      integer(c_size_t), intent(in) :: rdispls(*)
      integer(c_int), value :: dtype
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_ialltoallv

    integer(c_int) function c_xc_iscan(sendbuf, recvbuf, count, dtype, op, comm, req) &
        bind(c, name='xc_iscan')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_iscan

    integer(c_int) function c_xc_iexscan(sendbuf, recvbuf, count, dtype, op, comm, req) &
        bind(c, name='xc_iexscan')
      import :: c_int, c_ptr, c_size_t, xc_request
      type(c_ptr), value :: sendbuf
      type(c_ptr), value :: recvbuf
      integer(c_size_t), value :: count
      integer(c_int), value :: dtype
      integer(c_int), value :: op
      type(c_ptr), value :: comm
      type(xc_request), intent(inout) :: req
    end function c_xc_iexscan

    integer(c_int) function c_xc_group_start() &
        bind(c, name='xc_group_start')
      import :: c_int
    end function c_xc_group_start

    integer(c_int) function c_xc_group_end() &
        bind(c, name='xc_group_end')
      import :: c_int
    end function c_xc_group_end

    integer(c_int) function c_xc_mem_alloc(comm, bytes, ptr) bind(c, name='xc_mem_alloc')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: comm
      integer(c_size_t), value :: bytes
      type(c_ptr), intent(inout) :: ptr
    end function c_xc_mem_alloc

    integer(c_int) function c_xc_mem_free(comm, ptr) bind(c, name='xc_mem_free')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: ptr
    end function c_xc_mem_free

    integer(c_int) function c_xc_stream_create(comm, out) bind(c, name='xc_stream_create')
      import :: c_int, c_ptr, xc_stream
      type(c_ptr), value :: comm
      type(xc_stream), intent(inout) :: out
    end function c_xc_stream_create

    integer(c_int) function c_xc_stream_wrap(comm, cuda_stream, out) bind(c, name='xc_stream_wrap')
      import :: c_int, c_ptr, xc_stream
      type(c_ptr), value :: comm
      type(c_ptr), value :: cuda_stream
      type(xc_stream), intent(inout) :: out
    end function c_xc_stream_wrap

    integer(c_int) function c_xc_stream_destroy(stream) bind(c, name='xc_stream_destroy')
      import :: c_int, c_ptr
      type(c_ptr), value :: stream
    end function c_xc_stream_destroy

    integer(c_int) function c_xc_stream_synchronize(stream) bind(c, name='xc_stream_synchronize')
      import :: c_int, c_ptr
      type(c_ptr), value :: stream
    end function c_xc_stream_synchronize

    integer(c_int) function c_xc_stream_bind(comm, stream, target) bind(c, name='xc_stream_bind')
      import :: c_int, c_ptr
      type(c_ptr), value :: comm
      type(c_ptr), value :: stream
      integer(c_int), value :: target
    end function c_xc_stream_bind

    integer(c_int) function c_xc_mem_alloc_device(comm, bytes, ptr) bind(c, name='xc_mem_alloc_device')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: comm
      integer(c_size_t), value :: bytes
      type(c_ptr), intent(inout) :: ptr
    end function c_xc_mem_alloc_device

    integer(c_int) function c_xc_buffer_register(comm, ptr, bytes, out) bind(c, name='xc_buffer_register')
      import :: c_int, c_ptr, c_size_t, xc_buffer
      type(c_ptr), value :: comm
      type(c_ptr), value :: ptr
      integer(c_size_t), value :: bytes
      type(xc_buffer), intent(inout) :: out
    end function c_xc_buffer_register

    integer(c_int) function c_xc_buffer_deregister(buf) bind(c, name='xc_buffer_deregister')
      import :: c_int, c_ptr
      type(c_ptr), value :: buf
    end function c_xc_buffer_deregister

    integer(c_int) function c_xc_layout_boxes(comm, ndim, global_shape, nboxes, offsets, extents, owners, out) &
        bind(c, name='xc_layout_boxes')
      import :: c_int, c_ptr, c_size_t, xc_layout
      type(c_ptr), value :: comm
      integer(c_int), value :: ndim
      integer(c_size_t), intent(in) :: global_shape(*)
      integer(c_size_t), value :: nboxes
      integer(c_size_t), intent(in) :: offsets(*), extents(*)
      integer(c_int), intent(in) :: owners(*)
      type(xc_layout), intent(inout) :: out
    end function c_xc_layout_boxes

    integer(c_int) function c_xc_layout_mesh(comm, ndim, global_shape, mesh_ndim, mesh_shape, placements, out) &
        bind(c, name='xc_layout_mesh')
      import :: c_int, c_ptr, c_size_t, xc_layout, xc_placement
      type(c_ptr), value :: comm
      integer(c_int), value :: ndim, mesh_ndim
      integer(c_size_t), intent(in) :: global_shape(*)
      integer(c_int), intent(in) :: mesh_shape(*)
      type(xc_placement), intent(in) :: placements(*)
      type(xc_layout), intent(inout) :: out
    end function c_xc_layout_mesh

    integer(c_int) function c_xc_layout_block_cyclic(comm, rows, cols, mb, nb, nprow, npcol, rsrc, csrc, &
        grid_order, storage, out) bind(c, name='xc_layout_block_cyclic')
      import :: c_int, c_ptr, c_size_t, xc_layout
      type(c_ptr), value :: comm
      integer(c_size_t), value :: rows, cols, mb, nb
      integer(c_int), value :: nprow, npcol, rsrc, csrc, grid_order, storage
      type(xc_layout), intent(inout) :: out
    end function c_xc_layout_block_cyclic

    integer(c_int) function c_xc_layout_local_count(layout, count) bind(c, name='xc_layout_local_count')
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: layout
      integer(c_size_t), intent(inout) :: count
    end function c_xc_layout_local_count

    integer(c_int) function c_xc_layout_free(layout) bind(c, name='xc_layout_free')
      import :: c_int, c_ptr
      type(c_ptr), value :: layout
    end function c_xc_layout_free

    integer(c_int) function c_xc_redist_config_init(cfg, size) bind(c, name='xc_redist_config_init')
      import :: c_int, c_size_t, xc_redist_config
      type(xc_redist_config), intent(inout) :: cfg
      integer(c_size_t), value :: size
    end function c_xc_redist_config_init

    integer(c_int) function c_xc_redistribute_plan(src, dst, dtype, config, plan) bind(c, name='xc_redistribute_plan')
      import :: c_int, c_ptr, xc_redist_config, xc_plan
      type(c_ptr), value :: src, dst
      integer(c_int), value :: dtype
      type(xc_redist_config), intent(in), optional :: config
      type(xc_plan), intent(inout) :: plan
    end function c_xc_redistribute_plan

    integer(c_int) function c_xc_redistribute(plan, sendbuf, recvbuf) bind(c, name='xc_redistribute')
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, sendbuf, recvbuf
    end function c_xc_redistribute

    integer(c_int) function c_xc_iredistribute(plan, sendbuf, recvbuf, req) bind(c, name='xc_iredistribute')
      import :: c_int, c_ptr, xc_request
      type(c_ptr), value :: plan, sendbuf, recvbuf
      type(xc_request), intent(inout) :: req
    end function c_xc_iredistribute

    integer(c_int) function c_xc_plan_info(plan, info) bind(c, name='xc_plan_info')
      import :: c_int, c_ptr, xc_plan_info_t
      type(c_ptr), value :: plan
      type(xc_plan_info_t), intent(inout) :: info
    end function c_xc_plan_info

    integer(c_int) function c_xc_plan_relabel(plan, perm, bytes_saved) bind(c, name='xc_plan_relabel')
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: plan
      integer(c_int), intent(inout) :: perm(*)
      integer(c_int64_t), intent(inout) :: bytes_saved
    end function c_xc_plan_relabel

    integer(c_int) function c_xc_plan_free(plan) bind(c, name='xc_plan_free')
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
    end function c_xc_plan_free

    ! Not xcomm: the C library's strlen, to read the library's strings.
    integer(c_size_t) function c_strlen(s) bind(c, name='strlen')
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function c_strlen
  end interface

contains

  ! ==== helpers ===============================================================

  ! A NUL-terminated C string owned by the library, copied into Fortran.
  function c_to_f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    allocate (character(len=n) :: s)
    if (n == 0) return
    call c_f_pointer(p, chars, [n])
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function c_to_f_string

  ! Every call into the library ends here: hand rc to ierr, or stop on error.
  subroutine finish(rc, fn, ierr)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: fn
    integer, intent(out), optional :: ierr
    if (binding_msg_set) binding_msg_set = .false.
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc < 0) then
      call die(fn, int(rc), c_to_f_string(c_xc_last_error()))
    end if
  end subroutine finish

  ! An error found by the bindings, before any call into the library.
  subroutine fail(fn, why, ierr)
    character(len=*), intent(in) :: fn, why
    integer, intent(out), optional :: ierr
    binding_msg = fn // ': ' // why
    binding_msg_set = .true.
    if (present(ierr)) then
      ierr = XC_ERR_INVALID_ARGUMENT
    else
      call die(fn, XC_ERR_INVALID_ARGUMENT, trim(binding_msg))
    end if
  end subroutine fail

  ! The default error handler: report and stop this rank (xcrun stops the rest).
  subroutine die(fn, rc, detail)
    character(len=*), intent(in) :: fn, detail
    integer, intent(in) :: rc
    character(len=16) :: code
    write (code, '(i0)') rc
    write (error_unit, '(a)') 'xcomm: ' // fn // ' failed: ' // c_to_f_string(c_xc_strerror(int(rc, c_int))) // &
      ' (' // trim(code) // '): ' // detail
    flush (error_unit)
    error stop 1
  end subroutine die

  ! The address of a buffer (any type, any rank; contiguous where it matters).
  function addr(buf) result(p)
    type(*), dimension(..), target :: buf
    type(c_ptr) :: p
    p = c_loc(buf)
  end function addr

  logical function is_in_place(p)
    type(c_ptr), intent(in) :: p
    is_in_place = c_associated(p, c_loc(XC_IN_PLACE))
  end function is_in_place

  ! The C XC_IN_PLACE, ((const void *)1).
  type(c_ptr) function c_in_place()
    c_in_place = transfer(1_c_intptr_t, c_null_ptr)
  end function c_in_place

  ! Checks shared by every call with a buffer; .false. after reporting.
  logical function buffer_ok(fn, p, count, ierr)
    character(len=*), intent(in) :: fn
    type(c_ptr), intent(in) :: p
    integer(int64), intent(in) :: count
    integer, intent(out), optional :: ierr
    buffer_ok = .false.
    if (count < 0) then
      call fail(fn, 'count is negative', ierr)
    else if (is_in_place(p)) then
      call fail(fn, 'XC_IN_PLACE is not valid for this buffer (see the header per op)', ierr)
    else
      buffer_ok = .true.
    end if
  end function buffer_ok

  logical function count_ok(fn, count, ierr)
    character(len=*), intent(in) :: fn
    integer(int64), intent(in) :: count
    integer, intent(out), optional :: ierr
    count_ok = count >= 0
    if (.not. count_ok) call fail(fn, 'count is negative', ierr)
  end function count_ok

  ! A count or displacement array needs one entry per rank of comm (the
  ! library reads that many).
  logical function counts_ok(fn, what, counts, comm, ierr)
    character(len=*), intent(in) :: fn, what
    integer(c_size_t), intent(in) :: counts(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    integer(c_int) :: n
    n = 0
    counts_ok = .true.
    if (c_xc_comm_size(comm%ptr, n) /= XC_SUCCESS) return  ! a bad comm: the call itself reports it
    if (size(counts) < n) then
      counts_ok = .false.
      call fail(fn, what // ' holds fewer entries than the communicator has ranks', ierr)
    end if
  end function counts_ok

  ! ==== operators =============================================================

  elemental logical function comm_eq(a, b)
    type(xc_comm), intent(in) :: a, b
    comm_eq = (.not. c_associated(a%ptr) .and. .not. c_associated(b%ptr)) .or. c_associated(a%ptr, b%ptr)
  end function comm_eq

  elemental logical function comm_ne(a, b)
    type(xc_comm), intent(in) :: a, b
    comm_ne = .not. comm_eq(a, b)
  end function comm_ne

  elemental logical function request_eq(a, b)
    type(xc_request), intent(in) :: a, b
    request_eq = (.not. c_associated(a%ptr) .and. .not. c_associated(b%ptr)) .or. c_associated(a%ptr, b%ptr)
  end function request_eq

  elemental logical function request_ne(a, b)
    type(xc_request), intent(in) :: a, b
    request_ne = .not. request_eq(a, b)
  end function request_ne

  elemental logical function stream_eq(a, b)
    type(xc_stream), intent(in) :: a, b
    stream_eq = (.not. c_associated(a%ptr) .and. .not. c_associated(b%ptr)) .or. c_associated(a%ptr, b%ptr)
  end function stream_eq

  elemental logical function stream_ne(a, b)
    type(xc_stream), intent(in) :: a, b
    stream_ne = .not. stream_eq(a, b)
  end function stream_ne

  elemental logical function buffer_eq(a, b)
    type(xc_buffer), intent(in) :: a, b
    buffer_eq = (.not. c_associated(a%ptr) .and. .not. c_associated(b%ptr)) .or. c_associated(a%ptr, b%ptr)
  end function buffer_eq

  elemental logical function buffer_ne(a, b)
    type(xc_buffer), intent(in) :: a, b
    buffer_ne = .not. buffer_eq(a, b)
  end function buffer_ne

  ! ==== status, versions, dtypes, configuration ================================

  !> Library version at run time (any argument may be left out).
  subroutine xc_get_version(major, minor, patch, ierr)
    integer, intent(out), optional :: major, minor, patch
    integer, intent(out), optional :: ierr
    integer(c_int) :: v(3)
    integer(c_int) :: rc
    v = 0
    rc = c_xc_get_version(v(1), v(2), v(3))
    if (rc == XC_SUCCESS) then
      if (present(major)) major = v(1)
      if (present(minor)) minor = v(2)
      if (present(patch)) patch = v(3)
    end if
    call finish(rc, 'xc_get_version', ierr)
  end subroutine xc_get_version

  !> A static description of a result code.
  function xc_strerror(result) result(s)
    integer, intent(in) :: result
    character(len=:), allocatable :: s
    s = c_to_f_string(c_xc_strerror(int(result, c_int)))
  end function xc_strerror

  !> The detail of the last error on this thread, or "" after a success.
  function xc_last_error() result(s)
    character(len=:), allocatable :: s
    if (binding_msg_set) then
      s = trim(binding_msg)
    else
      s = c_to_f_string(c_xc_last_error())
    end if
  end function xc_last_error

  !> Bytes of one element of dtype, or 0 for an unknown dtype.
  function xc_dtype_size(dtype) result(bytes)
    integer, intent(in) :: dtype
    integer(c_size_t) :: bytes
    bytes = c_xc_dtype_size(int(dtype, c_int))
  end function xc_dtype_size

  !> Fill cfg with the library's defaults (size = XC_CONFIG_SIZE).
  subroutine xc_config_init(cfg, ierr)
    type(xc_config), intent(inout) :: cfg
    integer, intent(out), optional :: ierr
    call finish(c_xc_config_init(cfg, c_sizeof(cfg)), 'xc_config_init', ierr)
  end subroutine xc_config_init

  ! ==== starting and communicators ============================================

  subroutine xc_init_nocfg(world, ierr)
    type(xc_comm), intent(out) :: world
    integer, intent(out), optional :: ierr
    call finish(c_xc_init(world=world), 'xc_init', ierr)
  end subroutine xc_init_nocfg

  subroutine xc_init_cfg(cfg, world, ierr)
    type(xc_config), intent(in) :: cfg
    type(xc_comm), intent(out) :: world
    integer, intent(out), optional :: ierr
    call finish(c_xc_init(cfg, world), 'xc_init', ierr)
  end subroutine xc_init_cfg

  subroutine xc_get_unique_id(id, ierr)
    type(xc_unique_id), intent(inout) :: id
    integer, intent(out), optional :: ierr
    call finish(c_xc_get_unique_id(id), 'xc_get_unique_id', ierr)
  end subroutine xc_get_unique_id

  subroutine xc_comm_init_rank_nocfg(nranks, id, rank, comm, ierr)
    integer, intent(in) :: nranks, rank
    type(xc_unique_id), intent(in) :: id
    type(xc_comm), intent(out) :: comm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_init_rank(int(nranks, c_int), id, int(rank, c_int), comm=comm), 'xc_comm_init_rank', ierr)
  end subroutine xc_comm_init_rank_nocfg

  subroutine xc_comm_init_rank_cfg(nranks, id, rank, cfg, comm, ierr)
    integer, intent(in) :: nranks, rank
    type(xc_unique_id), intent(in) :: id
    type(xc_config), intent(in) :: cfg
    type(xc_comm), intent(out) :: comm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_init_rank(int(nranks, c_int), id, int(rank, c_int), cfg, comm), 'xc_comm_init_rank', ierr)
  end subroutine xc_comm_init_rank_cfg

  !> Release comm (collective) and set it to XC_COMM_NULL on success.
  subroutine xc_comm_free(comm, ierr)
    type(xc_comm), intent(inout) :: comm
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = c_xc_comm_free(comm%ptr)
    if (rc == XC_SUCCESS) comm%ptr = c_null_ptr
    call finish(rc, 'xc_comm_free', ierr)
  end subroutine xc_comm_free

  subroutine xc_comm_abort(comm, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_abort(comm%ptr), 'xc_comm_abort', ierr)
  end subroutine xc_comm_abort

  subroutine xc_comm_rank(comm, rank, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out) :: rank
    integer, intent(out), optional :: ierr
    integer(c_int) :: v
    v = -1
    call finish(c_xc_comm_rank(comm%ptr, v), 'xc_comm_rank', ierr)
    rank = v
  end subroutine xc_comm_rank

  subroutine xc_comm_size(comm, size, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out) :: size
    integer, intent(out), optional :: ierr
    integer(c_int) :: v
    v = 0
    call finish(c_xc_comm_size(comm%ptr, v), 'xc_comm_size', ierr)
    size = v
  end subroutine xc_comm_size

  subroutine xc_comm_local_rank(comm, rank, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out) :: rank
    integer, intent(out), optional :: ierr
    integer(c_int) :: v
    v = -1
    call finish(c_xc_comm_local_rank(comm%ptr, v), 'xc_comm_local_rank', ierr)
    rank = v
  end subroutine xc_comm_local_rank

  subroutine xc_comm_local_size(comm, size, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out) :: size
    integer, intent(out), optional :: ierr
    integer(c_int) :: v
    v = 0
    call finish(c_xc_comm_local_size(comm%ptr, v), 'xc_comm_local_size', ierr)
    size = v
  end subroutine xc_comm_local_size

  !> err: the first asynchronous error seen on comm, or XC_SUCCESS.
  subroutine xc_comm_get_async_error(comm, err, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out) :: err
    integer, intent(out), optional :: ierr
    integer(c_int) :: v
    v = XC_SUCCESS
    call finish(c_xc_comm_get_async_error(comm%ptr, v), 'xc_comm_get_async_error', ierr)
    err = v
  end subroutine xc_comm_get_async_error

  !> newcomm is XC_COMM_NULL where color is XC_UNDEFINED.
  subroutine xc_comm_split_nocfg(parent, color, key, newcomm, ierr)
    type(xc_comm), intent(in) :: parent
    integer, intent(in) :: color, key
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_split(parent%ptr, int(color, c_int), int(key, c_int), out=newcomm), 'xc_comm_split', ierr)
  end subroutine xc_comm_split_nocfg

  subroutine xc_comm_split_cfg(parent, color, key, cfg, newcomm, ierr)
    type(xc_comm), intent(in) :: parent
    integer, intent(in) :: color, key
    type(xc_config), intent(in) :: cfg
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_split(parent%ptr, int(color, c_int), int(key, c_int), cfg, newcomm), 'xc_comm_split', ierr)
  end subroutine xc_comm_split_cfg

  ! The arrays must hold ngroups sizes and sum(group_sizes) ranks.
  logical function groups_ok(ngroups, group_sizes, ranks, ierr)
    integer, intent(in) :: ngroups
    integer, intent(in) :: group_sizes(:), ranks(:)
    integer, intent(out), optional :: ierr
    groups_ok = .false.
    if (ngroups > size(group_sizes)) then
      call fail('xc_comm_split_groups', 'group_sizes holds fewer than ngroups entries', ierr)
    else if (ngroups > 0) then
      if (all(group_sizes(1:ngroups) >= 0)) then
        if (sum(int(group_sizes(1:ngroups), int64)) > size(ranks, kind=int64)) then
          call fail('xc_comm_split_groups', 'ranks holds fewer than sum(group_sizes) entries', ierr)
          return
        end if
      end if
      groups_ok = .true.
    else
      groups_ok = .true.
    end if
  end function groups_ok

  !> Group g (1-based here, 0-based in C) holds the parent ranks
  !> ranks(off_g+1 : off_g+group_sizes(g)); newcomm is XC_COMM_NULL on a rank
  !> in no group.
  subroutine xc_comm_split_groups_nocfg(parent, ngroups, group_sizes, ranks, newcomm, ierr)
    type(xc_comm), intent(in) :: parent
    integer, intent(in) :: ngroups
    integer, intent(in) :: group_sizes(:), ranks(:)
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    if (.not. groups_ok(ngroups, group_sizes, ranks, ierr)) return
    call finish(c_xc_comm_split_groups(parent%ptr, int(ngroups, c_int), group_sizes, ranks, out=newcomm), &
                'xc_comm_split_groups', ierr)
  end subroutine xc_comm_split_groups_nocfg

  subroutine xc_comm_split_groups_cfg(parent, ngroups, group_sizes, ranks, cfg, newcomm, ierr)
    type(xc_comm), intent(in) :: parent
    integer, intent(in) :: ngroups
    integer, intent(in) :: group_sizes(:), ranks(:)
    type(xc_config), intent(in) :: cfg
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    if (.not. groups_ok(ngroups, group_sizes, ranks, ierr)) return
    call finish(c_xc_comm_split_groups(parent%ptr, int(ngroups, c_int), group_sizes, ranks, cfg, newcomm), &
                'xc_comm_split_groups', ierr)
  end subroutine xc_comm_split_groups_cfg

  !> A group made by its members alone (MPI_Comm_create_group): only the
  !> parent ranks listed in ranks(1:n) call it, each with the same list and
  !> tag; new rank = position in the list - 1.
  subroutine xc_comm_create_group_nocfg(parent, n, ranks, tag, newcomm, ierr)
    type(xc_comm), intent(in) :: parent
    integer, intent(in) :: n
    integer, intent(in) :: ranks(:)
    integer, intent(in) :: tag
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    if (n > size(ranks)) then
      call fail('xc_comm_create_group', 'ranks holds fewer than n entries', ierr)
      return
    end if
    call finish(c_xc_comm_create_group(parent%ptr, int(n, c_int), ranks, int(tag, c_int), out=newcomm), &
                'xc_comm_create_group', ierr)
  end subroutine xc_comm_create_group_nocfg

  subroutine xc_comm_create_group_cfg(parent, n, ranks, tag, cfg, newcomm, ierr)
    type(xc_comm), intent(in) :: parent
    integer, intent(in) :: n
    integer, intent(in) :: ranks(:)
    integer, intent(in) :: tag
    type(xc_config), intent(in) :: cfg
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    if (n > size(ranks)) then
      call fail('xc_comm_create_group', 'ranks holds fewer than n entries', ierr)
      return
    end if
    call finish(c_xc_comm_create_group(parent%ptr, int(n, c_int), ranks, int(tag, c_int), cfg, newcomm), &
                'xc_comm_create_group', ierr)
  end subroutine xc_comm_create_group_cfg

  subroutine xc_comm_dup(comm, newcomm, ierr)
    type(xc_comm), intent(in) :: comm
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_dup(comm%ptr, newcomm), 'xc_comm_dup', ierr)
  end subroutine xc_comm_dup

  !> Write comm's flight recorder (its last XC_TRACE_DEPTH collectives) to
  !> the file path; without path, to the file XC_TRACE_DIR names (ierr
  !> XC_ERR_INVALID_ARGUMENT when XC_TRACE_DIR is not set either). xc-trace
  !> reads these files. Local; works on an aborted or revoked communicator.
  subroutine xc_comm_trace_dump(comm, path, ierr)
    type(xc_comm), intent(in) :: comm
    character(len=*), intent(in), optional :: path
    integer, intent(out), optional :: ierr
    character(kind=c_char), allocatable, target :: cpath(:)
    integer :: i
    if (present(path)) then
      allocate(cpath(len(path) + 1))
      do i = 1, len(path)
        cpath(i) = path(i:i)
      end do
      cpath(len(path) + 1) = c_null_char
      call finish(c_xc_comm_trace_dump(comm%ptr, c_loc(cpath)), 'xc_comm_trace_dump', ierr)
    else
      call finish(c_xc_comm_trace_dump(comm%ptr, c_null_ptr), 'xc_comm_trace_dump', ierr)
    end if
  end subroutine xc_comm_trace_dump

  ! ==== fault tolerance (xcomm.h: revoke, agree, get_failed, shrink, grow) ========

  subroutine xc_comm_revoke(comm, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_revoke(comm%ptr), 'xc_comm_revoke', ierr)
  end subroutine xc_comm_revoke

  !> flag: in, this rank's; out, the AND over the survivors. ierr is
  !> XC_ERR_PEER_FAILED (flag still set) when the survivors agreed that some
  !> ranks failed: pass ierr to go on after that.
  subroutine xc_comm_agree(comm, flag, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(inout) :: flag
    integer, intent(out), optional :: ierr
    integer(c_int) :: v, rc
    v = int(flag, c_int)
    rc = c_xc_comm_agree(comm%ptr, v)
    if (rc == XC_SUCCESS .or. rc == XC_ERR_PEER_FAILED) flag = v
    call finish(rc, 'xc_comm_agree', ierr)
  end subroutine xc_comm_agree

  !> n: how many ranks of comm this process knows have failed; ranks (if
  !> present, at least comm's size entries) receives them, 0-based, in order.
  subroutine xc_comm_get_failed(comm, n, ranks, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out) :: n
    integer, intent(out), optional :: ranks(:)
    integer, intent(out), optional :: ierr
    integer(c_int) :: v, csize
    integer(c_int), allocatable :: buf(:)
    v = 0
    if (present(ranks)) then
      csize = 0
      call finish(c_xc_comm_size(comm%ptr, csize), 'xc_comm_get_failed', ierr)
      if (csize <= 0) return
      if (size(ranks) < csize) then
        call fail('xc_comm_get_failed', 'ranks holds fewer entries than the communicator has ranks', ierr)
        return
      end if
      allocate(buf(csize))
      call finish(c_xc_comm_get_failed(comm%ptr, v, buf), 'xc_comm_get_failed', ierr)
      ranks(1:v) = buf(1:v)
    else
      call finish(c_xc_comm_get_failed(comm%ptr, v), 'xc_comm_get_failed', ierr)
    end if
    n = v
  end subroutine xc_comm_get_failed

  subroutine xc_comm_shrink_nocfg(comm, newcomm, ierr)
    type(xc_comm), intent(in) :: comm
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_shrink(comm%ptr, out=newcomm), 'xc_comm_shrink', ierr)
  end subroutine xc_comm_shrink_nocfg

  subroutine xc_comm_shrink_cfg(comm, cfg, newcomm, ierr)
    type(xc_comm), intent(in) :: comm
    type(xc_config), intent(in) :: cfg
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_shrink(comm%ptr, cfg, newcomm), 'xc_comm_shrink', ierr)
  end subroutine xc_comm_shrink_cfg

  !> id: significant on rank 0 of comm (from xc_get_unique_id); the new
  !> processes call xc_comm_init_rank(size + nnew, id, size + i, ...).
  subroutine xc_comm_grow_nocfg(comm, nnew, id, newcomm, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: nnew
    type(xc_unique_id), intent(in) :: id
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_grow(comm%ptr, int(nnew, c_int), id, out=newcomm), 'xc_comm_grow', ierr)
  end subroutine xc_comm_grow_nocfg

  subroutine xc_comm_grow_cfg(comm, nnew, id, cfg, newcomm, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: nnew
    type(xc_unique_id), intent(in) :: id
    type(xc_config), intent(in) :: cfg
    type(xc_comm), intent(out) :: newcomm
    integer, intent(out), optional :: ierr
    call finish(c_xc_comm_grow(comm%ptr, int(nnew, c_int), id, cfg, newcomm), 'xc_comm_grow', ierr)
  end subroutine xc_comm_grow_cfg

  ! ==== point to point ===========================================================

  subroutine xc_send_i8(buf, count, dtype, peer, tag, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: buf
    integer(int64), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = addr(buf)
    if (.not. buffer_ok('xc_send', p, count, ierr)) return
    call finish(c_xc_send(p, int(count, c_size_t), int(dtype, c_int), int(peer, c_int), int(tag, c_int), comm%ptr), &
                'xc_send', ierr)
  end subroutine xc_send_i8

  subroutine xc_send_i4(buf, count, dtype, peer, tag, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: buf
    integer(int32), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call xc_send_i8(buf, int(count, int64), dtype, peer, tag, comm, ierr)
  end subroutine xc_send_i4

  subroutine recv_impl(buf, count, dtype, peer, tag, comm, ierr, status)
    type(*), dimension(..), intent(inout), target, contiguous :: buf
    integer(int64), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    type(xc_status), intent(inout), optional :: status
    type(c_ptr) :: p
    p = addr(buf)
    if (.not. buffer_ok('xc_recv', p, count, ierr)) return
    call finish(c_xc_recv(p, int(count, c_size_t), int(dtype, c_int), int(peer, c_int), int(tag, c_int), comm%ptr, &
                          status), 'xc_recv', ierr)
  end subroutine recv_impl

  subroutine xc_recv_i8(buf, count, dtype, peer, tag, comm, ierr)
    type(*), dimension(..), intent(inout), target, contiguous :: buf
    integer(int64), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call recv_impl(buf, count, dtype, peer, tag, comm, ierr)
  end subroutine xc_recv_i8

  subroutine xc_recv_i4(buf, count, dtype, peer, tag, comm, ierr)
    type(*), dimension(..), intent(inout), target, contiguous :: buf
    integer(int32), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call recv_impl(buf, int(count, int64), dtype, peer, tag, comm, ierr)
  end subroutine xc_recv_i4

  subroutine xc_recv_i8_st(buf, count, dtype, peer, tag, comm, status, ierr)
    type(*), dimension(..), intent(inout), target, contiguous :: buf
    integer(int64), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    type(xc_status), intent(out) :: status
    integer, intent(out), optional :: ierr
    call recv_impl(buf, count, dtype, peer, tag, comm, ierr, status)
  end subroutine xc_recv_i8_st

  subroutine xc_recv_i4_st(buf, count, dtype, peer, tag, comm, status, ierr)
    type(*), dimension(..), intent(inout), target, contiguous :: buf
    integer(int32), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    type(xc_status), intent(out) :: status
    integer, intent(out), optional :: ierr
    call recv_impl(buf, int(count, int64), dtype, peer, tag, comm, ierr, status)
  end subroutine xc_recv_i4_st

  subroutine sendrecv_impl(sendbuf, sendcount, dest, sendtag, recvbuf, recvcount, source, recvtag, dtype, comm, &
                           ierr, status)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int64), intent(in) :: sendcount, recvcount
    integer, intent(in) :: dest, sendtag, source, recvtag, dtype
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    type(xc_status), intent(inout), optional :: status
    type(c_ptr) :: ps, pr
    ps = addr(sendbuf)
    pr = addr(recvbuf)
    if (.not. buffer_ok('xc_sendrecv', ps, sendcount, ierr)) return
    if (.not. buffer_ok('xc_sendrecv', pr, recvcount, ierr)) return
    call finish(c_xc_sendrecv(ps, int(sendcount, c_size_t), int(dest, c_int), int(sendtag, c_int), &
                              pr, int(recvcount, c_size_t), int(source, c_int), int(recvtag, c_int), &
                              int(dtype, c_int), comm%ptr, status), 'xc_sendrecv', ierr)
  end subroutine sendrecv_impl

  subroutine xc_sendrecv_i8(sendbuf, sendcount, dest, sendtag, recvbuf, recvcount, source, recvtag, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int64), intent(in) :: sendcount, recvcount
    integer, intent(in) :: dest, sendtag, source, recvtag, dtype
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call sendrecv_impl(sendbuf, sendcount, dest, sendtag, recvbuf, recvcount, source, recvtag, dtype, comm, ierr)
  end subroutine xc_sendrecv_i8

  subroutine xc_sendrecv_i4(sendbuf, sendcount, dest, sendtag, recvbuf, recvcount, source, recvtag, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int32), intent(in) :: sendcount, recvcount
    integer, intent(in) :: dest, sendtag, source, recvtag, dtype
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call sendrecv_impl(sendbuf, int(sendcount, int64), dest, sendtag, recvbuf, int(recvcount, int64), source, &
                       recvtag, dtype, comm, ierr)
  end subroutine xc_sendrecv_i4

  subroutine xc_sendrecv_i8_st(sendbuf, sendcount, dest, sendtag, recvbuf, recvcount, source, recvtag, dtype, comm, &
                               status, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int64), intent(in) :: sendcount, recvcount
    integer, intent(in) :: dest, sendtag, source, recvtag, dtype
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    type(xc_comm), intent(in) :: comm
    type(xc_status), intent(out) :: status
    integer, intent(out), optional :: ierr
    call sendrecv_impl(sendbuf, sendcount, dest, sendtag, recvbuf, recvcount, source, recvtag, dtype, comm, ierr, &
                       status)
  end subroutine xc_sendrecv_i8_st

  subroutine xc_sendrecv_i4_st(sendbuf, sendcount, dest, sendtag, recvbuf, recvcount, source, recvtag, dtype, comm, &
                               status, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int32), intent(in) :: sendcount, recvcount
    integer, intent(in) :: dest, sendtag, source, recvtag, dtype
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    type(xc_comm), intent(in) :: comm
    type(xc_status), intent(out) :: status
    integer, intent(out), optional :: ierr
    call sendrecv_impl(sendbuf, int(sendcount, int64), dest, sendtag, recvbuf, int(recvcount, int64), source, &
                       recvtag, dtype, comm, ierr, status)
  end subroutine xc_sendrecv_i4_st

  ! Non-blocking: no CONTIGUOUS attribute (a copy would die with the call), so
  ! the buffer is the caller's own storage and must be contiguous.
  subroutine xc_isend_i8(buf, count, dtype, peer, tag, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: buf
    integer(int64), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    if (.not. is_contiguous(buf)) then
      call fail('xc_isend', 'buf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p = addr(buf)
    if (.not. buffer_ok('xc_isend', p, count, ierr)) return
    call finish(c_xc_isend(p, int(count, c_size_t), int(dtype, c_int), int(peer, c_int), int(tag, c_int), &
                           comm%ptr, req), 'xc_isend', ierr)
  end subroutine xc_isend_i8

  subroutine xc_isend_i4(buf, count, dtype, peer, tag, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: buf
    integer(int32), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_isend_i8(buf, int(count, int64), dtype, peer, tag, comm, req, ierr)
  end subroutine xc_isend_i4

  subroutine xc_irecv_i8(buf, count, dtype, peer, tag, comm, req, ierr)
    type(*), dimension(..), intent(inout), target, asynchronous :: buf
    integer(int64), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    if (.not. is_contiguous(buf)) then
      call fail('xc_irecv', 'buf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p = addr(buf)
    if (.not. buffer_ok('xc_irecv', p, count, ierr)) return
    call finish(c_xc_irecv(p, int(count, c_size_t), int(dtype, c_int), int(peer, c_int), int(tag, c_int), &
                           comm%ptr, req), 'xc_irecv', ierr)
  end subroutine xc_irecv_i8

  subroutine xc_irecv_i4(buf, count, dtype, peer, tag, comm, req, ierr)
    type(*), dimension(..), intent(inout), target, asynchronous :: buf
    integer(int32), intent(in) :: count
    integer, intent(in) :: dtype, peer, tag
    type(xc_comm), intent(in) :: comm
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_irecv_i8(buf, int(count, int64), dtype, peer, tag, comm, req, ierr)
  end subroutine xc_irecv_i4

  !> Wait for req, free it and set it to XC_REQUEST_NULL; ierr is the
  !> request's own result.
  subroutine xc_wait_nost(req, ierr)
    type(xc_request), intent(inout) :: req
    integer, intent(out), optional :: ierr
    call finish(c_xc_wait(req), 'xc_wait', ierr)
  end subroutine xc_wait_nost

  subroutine xc_wait_st(req, status, ierr)
    type(xc_request), intent(inout) :: req
    type(xc_status), intent(out) :: status
    integer, intent(out), optional :: ierr
    call finish(c_xc_wait(req, status), 'xc_wait', ierr)
  end subroutine xc_wait_st

  !> flag = .true. and req freed (as xc_wait) when complete.
  subroutine xc_test_nost(req, flag, ierr)
    type(xc_request), intent(inout) :: req
    logical, intent(out) :: flag
    integer, intent(out), optional :: ierr
    integer(c_int) :: done
    done = 0
    call finish(c_xc_test(req, done), 'xc_test', ierr)
    flag = done /= 0
  end subroutine xc_test_nost

  subroutine xc_test_st(req, flag, status, ierr)
    type(xc_request), intent(inout) :: req
    logical, intent(out) :: flag
    type(xc_status), intent(out) :: status
    integer, intent(out), optional :: ierr
    integer(c_int) :: done
    done = 0
    call finish(c_xc_test(req, done, status), 'xc_test', ierr)
    flag = done /= 0
  end subroutine xc_test_st

  !> Wait for reqs(1:n); every request is freed; ierr is the first error.
  subroutine xc_waitall_nost(n, reqs, ierr)
    integer, intent(in) :: n
    type(xc_request), intent(inout) :: reqs(:)
    integer, intent(out), optional :: ierr
    if (n < 0 .or. n > size(reqs)) then
      call fail('xc_waitall', 'n is negative or larger than size(reqs)', ierr)
      return
    end if
    call finish(c_xc_waitall(int(n, c_size_t), reqs), 'xc_waitall', ierr)
  end subroutine xc_waitall_nost

  subroutine xc_waitall_st(n, reqs, statuses, ierr)
    integer, intent(in) :: n
    type(xc_request), intent(inout) :: reqs(:)
    type(xc_status), intent(inout) :: statuses(:)
    integer, intent(out), optional :: ierr
    if (n < 0 .or. n > size(reqs)) then
      call fail('xc_waitall', 'n is negative or larger than size(reqs)', ierr)
      return
    end if
    if (n > size(statuses)) then
      call fail('xc_waitall', 'statuses holds fewer than n entries', ierr)
      return
    end if
    call finish(c_xc_waitall(int(n, c_size_t), reqs, statuses), 'xc_waitall', ierr)
  end subroutine xc_waitall_st

  ! ==== collectives ===============================================================

  subroutine xc_barrier(comm, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call finish(c_xc_barrier(comm%ptr), 'xc_barrier', ierr)
  end subroutine xc_barrier

  subroutine xc_broadcast_i8(buf, count, dtype, root, comm, ierr)
    type(*), dimension(..), intent(inout), target, contiguous :: buf
    integer(int64), intent(in) :: count
    integer, intent(in) :: dtype, root
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = addr(buf)
    if (.not. buffer_ok('xc_broadcast', p, count, ierr)) return
    call finish(c_xc_broadcast(p, int(count, c_size_t), int(dtype, c_int), int(root, c_int), comm%ptr), &
                'xc_broadcast', ierr)
  end subroutine xc_broadcast_i8

  subroutine xc_broadcast_i4(buf, count, dtype, root, comm, ierr)
    type(*), dimension(..), intent(inout), target, contiguous :: buf
    integer(int32), intent(in) :: count
    integer, intent(in) :: dtype, root
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call xc_broadcast_i8(buf, int(count, int64), dtype, root, comm, ierr)
  end subroutine xc_broadcast_i4

  !> sendbuf may be XC_IN_PLACE (the input is read from recvbuf).
  subroutine xc_allreduce_i8(sendbuf, recvbuf, count, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int64), intent(in) :: count
    integer, intent(in) :: dtype, op
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    type(c_ptr) :: ps, pr
    ps = addr(sendbuf)
    pr = addr(recvbuf)
    if (.not. buffer_ok('xc_allreduce', pr, count, ierr)) return
    if (is_in_place(ps)) then
      ps = c_in_place()
    end if
    call finish(c_xc_allreduce(ps, pr, int(count, c_size_t), int(dtype, c_int), int(op, c_int), comm%ptr), &
                'xc_allreduce', ierr)
  end subroutine xc_allreduce_i8

  subroutine xc_allreduce_i4(sendbuf, recvbuf, count, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int32), intent(in) :: count
    integer, intent(in) :: dtype, op
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call xc_allreduce_i8(sendbuf, recvbuf, int(count, int64), dtype, op, comm, ierr)
  end subroutine xc_allreduce_i4

  !> recvbuf holds size*sendcount elements, rank i's block at i*sendcount.
  !> sendbuf may be XC_IN_PLACE (this rank's block is already in recvbuf).
  subroutine xc_allgather_i8(sendbuf, recvbuf, sendcount, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int64), intent(in) :: sendcount
    integer, intent(in) :: dtype
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    type(c_ptr) :: ps, pr
    ps = addr(sendbuf)
    pr = addr(recvbuf)
    if (.not. buffer_ok('xc_allgather', pr, sendcount, ierr)) return
    if (is_in_place(ps)) then
      ps = c_in_place()
    end if
    call finish(c_xc_allgather(ps, pr, int(sendcount, c_size_t), int(dtype, c_int), comm%ptr), 'xc_allgather', ierr)
  end subroutine xc_allgather_i8

  subroutine xc_allgather_i4(sendbuf, recvbuf, sendcount, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int32), intent(in) :: sendcount
    integer, intent(in) :: dtype
    type(xc_comm), intent(in) :: comm
    integer, intent(out), optional :: ierr
    call xc_allgather_i8(sendbuf, recvbuf, int(sendcount, int64), dtype, comm, ierr)
  end subroutine xc_allgather_i4

  ! ==== the rest of the collective set, non-blocking collectives, groups ========
  ! Generated from one table of the C signatures, so every op has the same
  ! checks: XC_IN_PLACE where the header allows it (scatter(v): as recvbuf at
  ! the root), a negative count, count arrays shorter than the communicator,
  ! and (non-blocking) buffers that are not contiguous.

  subroutine xc_reduce_i8(sendbuf, recvbuf, count, dtype, op, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op, root
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_reduce', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_reduce', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_reduce', count, ierr)) return
    call finish(c_xc_reduce(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), int(op, c_int), &
        int(root, c_int), comm%ptr), 'xc_reduce', ierr)
  end subroutine xc_reduce_i8

  subroutine xc_reduce_i4(sendbuf, recvbuf, count, dtype, op, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op, root
    integer, intent(out), optional :: ierr
    call xc_reduce_i8(sendbuf, recvbuf, int(count, int64), dtype, op, root, comm, ierr)
  end subroutine xc_reduce_i4

  subroutine xc_allgatherv_i8(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int64), intent(in) :: sendcount
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_allgatherv', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_allgatherv', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_allgatherv', sendcount, ierr)) return
    if (.not. counts_ok('xc_allgatherv', 'recvcounts', recvcounts, comm, ierr)) return
    if (.not. counts_ok('xc_allgatherv', 'displs', displs, comm, ierr)) return
    call finish(c_xc_allgatherv(p_sendbuf, int(sendcount, c_size_t), p_recvbuf, recvcounts, displs, int(dtype, &
        c_int), comm%ptr), 'xc_allgatherv', ierr)
  end subroutine xc_allgatherv_i8

  subroutine xc_allgatherv_i4(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int32), intent(in) :: sendcount
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    integer, intent(out), optional :: ierr
    call xc_allgatherv_i8(sendbuf, int(sendcount, int64), recvbuf, recvcounts, displs, dtype, comm, ierr)
  end subroutine xc_allgatherv_i4

  subroutine xc_gather_i8(sendbuf, recvbuf, sendcount, dtype, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int64), intent(in) :: sendcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_gather', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_gather', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_gather', sendcount, ierr)) return
    call finish(c_xc_gather(p_sendbuf, p_recvbuf, int(sendcount, c_size_t), int(dtype, c_int), int(root, c_int), &
        comm%ptr), 'xc_gather', ierr)
  end subroutine xc_gather_i8

  subroutine xc_gather_i4(sendbuf, recvbuf, sendcount, dtype, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int32), intent(in) :: sendcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    integer, intent(out), optional :: ierr
    call xc_gather_i8(sendbuf, recvbuf, int(sendcount, int64), dtype, root, comm, ierr)
  end subroutine xc_gather_i4

  subroutine xc_gatherv_i8(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int64), intent(in) :: sendcount
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_gatherv', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_gatherv', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_gatherv', sendcount, ierr)) return
    if (.not. counts_ok('xc_gatherv', 'recvcounts', recvcounts, comm, ierr)) return
    if (.not. counts_ok('xc_gatherv', 'displs', displs, comm, ierr)) return
    call finish(c_xc_gatherv(p_sendbuf, int(sendcount, c_size_t), p_recvbuf, recvcounts, displs, int(dtype, &
        c_int), int(root, c_int), comm%ptr), 'xc_gatherv', ierr)
  end subroutine xc_gatherv_i8

  subroutine xc_gatherv_i4(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(int32), intent(in) :: sendcount
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    integer, intent(out), optional :: ierr
    call xc_gatherv_i8(sendbuf, int(sendcount, int64), recvbuf, recvcounts, displs, dtype, root, comm, ierr)
  end subroutine xc_gatherv_i4

  subroutine xc_scatter_i8(sendbuf, recvbuf, recvcount, dtype, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), target, contiguous :: recvbuf
    integer(int64), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (.not. buffer_ok('xc_scatter', p_sendbuf, 0_int64, ierr)) return
    if (is_in_place(p_recvbuf)) then
      p_recvbuf = c_in_place()
    else if (.not. buffer_ok('xc_scatter', p_recvbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. count_ok('xc_scatter', recvcount, ierr)) return
    call finish(c_xc_scatter(p_sendbuf, p_recvbuf, int(recvcount, c_size_t), int(dtype, c_int), int(root, c_int), &
        comm%ptr), 'xc_scatter', ierr)
  end subroutine xc_scatter_i8

  subroutine xc_scatter_i4(sendbuf, recvbuf, recvcount, dtype, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), target, contiguous :: recvbuf
    integer(int32), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    integer, intent(out), optional :: ierr
    call xc_scatter_i8(sendbuf, recvbuf, int(recvcount, int64), dtype, root, comm, ierr)
  end subroutine xc_scatter_i4

  subroutine xc_scatterv_i8(sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(c_size_t), intent(in) :: sendcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(*), dimension(..), target, contiguous :: recvbuf
    integer(int64), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (.not. buffer_ok('xc_scatterv', p_sendbuf, 0_int64, ierr)) return
    if (is_in_place(p_recvbuf)) then
      p_recvbuf = c_in_place()
    else if (.not. buffer_ok('xc_scatterv', p_recvbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. count_ok('xc_scatterv', recvcount, ierr)) return
    if (.not. counts_ok('xc_scatterv', 'sendcounts', sendcounts, comm, ierr)) return
    if (.not. counts_ok('xc_scatterv', 'displs', displs, comm, ierr)) return
    call finish(c_xc_scatterv(p_sendbuf, sendcounts, displs, p_recvbuf, int(recvcount, c_size_t), int(dtype, &
        c_int), int(root, c_int), comm%ptr), 'xc_scatterv', ierr)
  end subroutine xc_scatterv_i8

  subroutine xc_scatterv_i4(sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(c_size_t), intent(in) :: sendcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(*), dimension(..), target, contiguous :: recvbuf
    integer(int32), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    integer, intent(out), optional :: ierr
    call xc_scatterv_i8(sendbuf, sendcounts, displs, recvbuf, int(recvcount, int64), dtype, root, comm, ierr)
  end subroutine xc_scatterv_i4

  subroutine xc_reduce_scatter_i8(sendbuf, recvbuf, recvcount, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int64), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_reduce_scatter', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_reduce_scatter', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_reduce_scatter', recvcount, ierr)) return
    call finish(c_xc_reduce_scatter(p_sendbuf, p_recvbuf, int(recvcount, c_size_t), int(dtype, c_int), int(op, &
        c_int), comm%ptr), 'xc_reduce_scatter', ierr)
  end subroutine xc_reduce_scatter_i8

  subroutine xc_reduce_scatter_i4(sendbuf, recvbuf, recvcount, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int32), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    integer, intent(out), optional :: ierr
    call xc_reduce_scatter_i8(sendbuf, recvbuf, int(recvcount, int64), dtype, op, comm, ierr)
  end subroutine xc_reduce_scatter_i4

  subroutine xc_reduce_scatterv(sendbuf, recvbuf, recvcounts, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_reduce_scatterv', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_reduce_scatterv', p_recvbuf, 0_int64, ierr)) return
    if (.not. counts_ok('xc_reduce_scatterv', 'recvcounts', recvcounts, comm, ierr)) return
    call finish(c_xc_reduce_scatterv(p_sendbuf, p_recvbuf, recvcounts, int(dtype, c_int), int(op, c_int), &
        comm%ptr), 'xc_reduce_scatterv', ierr)
  end subroutine xc_reduce_scatterv

  subroutine xc_alltoall_i8(sendbuf, recvbuf, count, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_alltoall', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_alltoall', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_alltoall', count, ierr)) return
    call finish(c_xc_alltoall(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), comm%ptr), &
        'xc_alltoall', ierr)
  end subroutine xc_alltoall_i8

  subroutine xc_alltoall_i4(sendbuf, recvbuf, count, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    integer, intent(out), optional :: ierr
    call xc_alltoall_i8(sendbuf, recvbuf, int(count, int64), dtype, comm, ierr)
  end subroutine xc_alltoall_i4

  subroutine xc_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    integer(c_size_t), intent(in) :: sendcounts(:)
    integer(c_size_t), intent(in) :: sdispls(:)
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: rdispls(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_alltoallv', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_alltoallv', p_recvbuf, 0_int64, ierr)) return
    if (.not. counts_ok('xc_alltoallv', 'sendcounts', sendcounts, comm, ierr)) return
    if (.not. counts_ok('xc_alltoallv', 'sdispls', sdispls, comm, ierr)) return
    if (.not. counts_ok('xc_alltoallv', 'recvcounts', recvcounts, comm, ierr)) return
    if (.not. counts_ok('xc_alltoallv', 'rdispls', rdispls, comm, ierr)) return
    call finish(c_xc_alltoallv(p_sendbuf, sendcounts, sdispls, p_recvbuf, recvcounts, rdispls, int(dtype, c_int), &
        comm%ptr), 'xc_alltoallv', ierr)
  end subroutine xc_alltoallv

  subroutine xc_scan_i8(sendbuf, recvbuf, count, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_scan', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_scan', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_scan', count, ierr)) return
    call finish(c_xc_scan(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), int(op, c_int), &
        comm%ptr), 'xc_scan', ierr)
  end subroutine xc_scan_i8

  subroutine xc_scan_i4(sendbuf, recvbuf, count, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    integer, intent(out), optional :: ierr
    call xc_scan_i8(sendbuf, recvbuf, int(count, int64), dtype, op, comm, ierr)
  end subroutine xc_scan_i4

  subroutine xc_exscan_i8(sendbuf, recvbuf, count, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_exscan', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_exscan', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_exscan', count, ierr)) return
    call finish(c_xc_exscan(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), int(op, c_int), &
        comm%ptr), 'xc_exscan', ierr)
  end subroutine xc_exscan_i8

  subroutine xc_exscan_i4(sendbuf, recvbuf, count, dtype, op, comm, ierr)
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    integer, intent(out), optional :: ierr
    call xc_exscan_i8(sendbuf, recvbuf, int(count, int64), dtype, op, comm, ierr)
  end subroutine xc_exscan_i4

  subroutine xc_ibarrier(comm, req, ierr)
    type(xc_comm), intent(in) :: comm
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call finish(c_xc_ibarrier(comm%ptr, req), 'xc_ibarrier', ierr)
  end subroutine xc_ibarrier

  subroutine xc_ibroadcast_i8(buf, count, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(inout), target, asynchronous :: buf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_buf
    if (.not. is_contiguous(buf)) then
      call fail('xc_ibroadcast', 'buf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_buf = addr(buf)
    if (.not. buffer_ok('xc_ibroadcast', p_buf, 0_int64, ierr)) return
    if (.not. count_ok('xc_ibroadcast', count, ierr)) return
    call finish(c_xc_ibroadcast(p_buf, int(count, c_size_t), int(dtype, c_int), int(root, c_int), comm%ptr, req), &
        'xc_ibroadcast', ierr)
  end subroutine xc_ibroadcast_i8

  subroutine xc_ibroadcast_i4(buf, count, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(inout), target, asynchronous :: buf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_ibroadcast_i8(buf, int(count, int64), dtype, root, comm, req, ierr)
  end subroutine xc_ibroadcast_i4

  subroutine xc_ireduce_i8(sendbuf, recvbuf, count, dtype, op, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_ireduce', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_ireduce', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_ireduce', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_ireduce', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_ireduce', count, ierr)) return
    call finish(c_xc_ireduce(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), int(op, c_int), &
        int(root, c_int), comm%ptr, req), 'xc_ireduce', ierr)
  end subroutine xc_ireduce_i8

  subroutine xc_ireduce_i4(sendbuf, recvbuf, count, dtype, op, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_ireduce_i8(sendbuf, recvbuf, int(count, int64), dtype, op, root, comm, req, ierr)
  end subroutine xc_ireduce_i4

  subroutine xc_iallreduce_i8(sendbuf, recvbuf, count, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_iallreduce', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_iallreduce', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_iallreduce', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_iallreduce', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_iallreduce', count, ierr)) return
    call finish(c_xc_iallreduce(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), int(op, c_int), &
        comm%ptr, req), 'xc_iallreduce', ierr)
  end subroutine xc_iallreduce_i8

  subroutine xc_iallreduce_i4(sendbuf, recvbuf, count, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_iallreduce_i8(sendbuf, recvbuf, int(count, int64), dtype, op, comm, req, ierr)
  end subroutine xc_iallreduce_i4

  subroutine xc_iallgather_i8(sendbuf, recvbuf, sendcount, dtype, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: sendcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_iallgather', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_iallgather', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_iallgather', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_iallgather', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_iallgather', sendcount, ierr)) return
    call finish(c_xc_iallgather(p_sendbuf, p_recvbuf, int(sendcount, c_size_t), int(dtype, c_int), comm%ptr, &
        req), 'xc_iallgather', ierr)
  end subroutine xc_iallgather_i8

  subroutine xc_iallgather_i4(sendbuf, recvbuf, sendcount, dtype, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: sendcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_iallgather_i8(sendbuf, recvbuf, int(sendcount, int64), dtype, comm, req, ierr)
  end subroutine xc_iallgather_i4

  subroutine xc_iallgatherv_i8(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    integer(int64), intent(in) :: sendcount
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_iallgatherv', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_iallgatherv', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_iallgatherv', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_iallgatherv', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_iallgatherv', sendcount, ierr)) return
    if (.not. counts_ok('xc_iallgatherv', 'recvcounts', recvcounts, comm, ierr)) return
    if (.not. counts_ok('xc_iallgatherv', 'displs', displs, comm, ierr)) return
    call finish(c_xc_iallgatherv(p_sendbuf, int(sendcount, c_size_t), p_recvbuf, recvcounts, displs, int(dtype, &
        c_int), comm%ptr, req), 'xc_iallgatherv', ierr)
  end subroutine xc_iallgatherv_i8

  subroutine xc_iallgatherv_i4(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    integer(int32), intent(in) :: sendcount
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_iallgatherv_i8(sendbuf, int(sendcount, int64), recvbuf, recvcounts, displs, dtype, comm, req, ierr)
  end subroutine xc_iallgatherv_i4

  subroutine xc_igather_i8(sendbuf, recvbuf, sendcount, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: sendcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_igather', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_igather', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_igather', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_igather', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_igather', sendcount, ierr)) return
    call finish(c_xc_igather(p_sendbuf, p_recvbuf, int(sendcount, c_size_t), int(dtype, c_int), int(root, c_int), &
        comm%ptr, req), 'xc_igather', ierr)
  end subroutine xc_igather_i8

  subroutine xc_igather_i4(sendbuf, recvbuf, sendcount, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: sendcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_igather_i8(sendbuf, recvbuf, int(sendcount, int64), dtype, root, comm, req, ierr)
  end subroutine xc_igather_i4

  subroutine xc_igatherv_i8(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    integer(int64), intent(in) :: sendcount
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_igatherv', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_igatherv', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_igatherv', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_igatherv', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_igatherv', sendcount, ierr)) return
    if (.not. counts_ok('xc_igatherv', 'recvcounts', recvcounts, comm, ierr)) return
    if (.not. counts_ok('xc_igatherv', 'displs', displs, comm, ierr)) return
    call finish(c_xc_igatherv(p_sendbuf, int(sendcount, c_size_t), p_recvbuf, recvcounts, displs, int(dtype, &
        c_int), int(root, c_int), comm%ptr, req), 'xc_igatherv', ierr)
  end subroutine xc_igatherv_i8

  subroutine xc_igatherv_i4(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    integer(int32), intent(in) :: sendcount
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_igatherv_i8(sendbuf, int(sendcount, int64), recvbuf, recvcounts, displs, dtype, root, comm, req, &
        ierr)
  end subroutine xc_igatherv_i4

  subroutine xc_iscatter_i8(sendbuf, recvbuf, recvcount, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_iscatter', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_iscatter', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (.not. buffer_ok('xc_iscatter', p_sendbuf, 0_int64, ierr)) return
    if (is_in_place(p_recvbuf)) then
      p_recvbuf = c_in_place()
    else if (.not. buffer_ok('xc_iscatter', p_recvbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. count_ok('xc_iscatter', recvcount, ierr)) return
    call finish(c_xc_iscatter(p_sendbuf, p_recvbuf, int(recvcount, c_size_t), int(dtype, c_int), int(root, &
        c_int), comm%ptr, req), 'xc_iscatter', ierr)
  end subroutine xc_iscatter_i8

  subroutine xc_iscatter_i4(sendbuf, recvbuf, recvcount, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_iscatter_i8(sendbuf, recvbuf, int(recvcount, int64), dtype, root, comm, req, ierr)
  end subroutine xc_iscatter_i4

  subroutine xc_iscatterv_i8(sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    integer(c_size_t), intent(in) :: sendcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(*), dimension(..), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_iscatterv', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_iscatterv', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (.not. buffer_ok('xc_iscatterv', p_sendbuf, 0_int64, ierr)) return
    if (is_in_place(p_recvbuf)) then
      p_recvbuf = c_in_place()
    else if (.not. buffer_ok('xc_iscatterv', p_recvbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. count_ok('xc_iscatterv', recvcount, ierr)) return
    if (.not. counts_ok('xc_iscatterv', 'sendcounts', sendcounts, comm, ierr)) return
    if (.not. counts_ok('xc_iscatterv', 'displs', displs, comm, ierr)) return
    call finish(c_xc_iscatterv(p_sendbuf, sendcounts, displs, p_recvbuf, int(recvcount, c_size_t), int(dtype, &
        c_int), int(root, c_int), comm%ptr, req), 'xc_iscatterv', ierr)
  end subroutine xc_iscatterv_i8

  subroutine xc_iscatterv_i4(sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    integer(c_size_t), intent(in) :: sendcounts(:)
    integer(c_size_t), intent(in) :: displs(:)
    type(*), dimension(..), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, root
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_iscatterv_i8(sendbuf, sendcounts, displs, recvbuf, int(recvcount, int64), dtype, root, comm, req, &
        ierr)
  end subroutine xc_iscatterv_i4

  subroutine xc_ireduce_scatter_i8(sendbuf, recvbuf, recvcount, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_ireduce_scatter', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_ireduce_scatter', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_ireduce_scatter', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_ireduce_scatter', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_ireduce_scatter', recvcount, ierr)) return
    call finish(c_xc_ireduce_scatter(p_sendbuf, p_recvbuf, int(recvcount, c_size_t), int(dtype, c_int), int(op, &
        c_int), comm%ptr, req), 'xc_ireduce_scatter', ierr)
  end subroutine xc_ireduce_scatter_i8

  subroutine xc_ireduce_scatter_i4(sendbuf, recvbuf, recvcount, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: recvcount
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_ireduce_scatter_i8(sendbuf, recvbuf, int(recvcount, int64), dtype, op, comm, req, ierr)
  end subroutine xc_ireduce_scatter_i4

  subroutine xc_ireduce_scatterv(sendbuf, recvbuf, recvcounts, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_ireduce_scatterv', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_ireduce_scatterv', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_ireduce_scatterv', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_ireduce_scatterv', p_recvbuf, 0_int64, ierr)) return
    if (.not. counts_ok('xc_ireduce_scatterv', 'recvcounts', recvcounts, comm, ierr)) return
    call finish(c_xc_ireduce_scatterv(p_sendbuf, p_recvbuf, recvcounts, int(dtype, c_int), int(op, c_int), &
        comm%ptr, req), 'xc_ireduce_scatterv', ierr)
  end subroutine xc_ireduce_scatterv

  subroutine xc_ialltoall_i8(sendbuf, recvbuf, count, dtype, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_ialltoall', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_ialltoall', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_ialltoall', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_ialltoall', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_ialltoall', count, ierr)) return
    call finish(c_xc_ialltoall(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), comm%ptr, req), &
        'xc_ialltoall', ierr)
  end subroutine xc_ialltoall_i8

  subroutine xc_ialltoall_i4(sendbuf, recvbuf, count, dtype, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_ialltoall_i8(sendbuf, recvbuf, int(count, int64), dtype, comm, req, ierr)
  end subroutine xc_ialltoall_i4

  subroutine xc_ialltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    integer(c_size_t), intent(in) :: sendcounts(:)
    integer(c_size_t), intent(in) :: sdispls(:)
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(c_size_t), intent(in) :: recvcounts(:)
    integer(c_size_t), intent(in) :: rdispls(:)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_ialltoallv', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_ialltoallv', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_ialltoallv', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_ialltoallv', p_recvbuf, 0_int64, ierr)) return
    if (.not. counts_ok('xc_ialltoallv', 'sendcounts', sendcounts, comm, ierr)) return
    if (.not. counts_ok('xc_ialltoallv', 'sdispls', sdispls, comm, ierr)) return
    if (.not. counts_ok('xc_ialltoallv', 'recvcounts', recvcounts, comm, ierr)) return
    if (.not. counts_ok('xc_ialltoallv', 'rdispls', rdispls, comm, ierr)) return
    call finish(c_xc_ialltoallv(p_sendbuf, sendcounts, sdispls, p_recvbuf, recvcounts, rdispls, int(dtype, &
        c_int), comm%ptr, req), 'xc_ialltoallv', ierr)
  end subroutine xc_ialltoallv

  subroutine xc_iscan_i8(sendbuf, recvbuf, count, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_iscan', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_iscan', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_iscan', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_iscan', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_iscan', count, ierr)) return
    call finish(c_xc_iscan(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), int(op, c_int), &
        comm%ptr, req), 'xc_iscan', ierr)
  end subroutine xc_iscan_i8

  subroutine xc_iscan_i4(sendbuf, recvbuf, count, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_iscan_i8(sendbuf, recvbuf, int(count, int64), dtype, op, comm, req, ierr)
  end subroutine xc_iscan_i4

  subroutine xc_iexscan_i8(sendbuf, recvbuf, count, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int64), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p_sendbuf, p_recvbuf
    if (.not. is_contiguous(sendbuf)) then
      call fail('xc_iexscan', 'sendbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    if (.not. is_contiguous(recvbuf)) then
      call fail('xc_iexscan', 'recvbuf is not contiguous (non-blocking buffers cannot be copied)', ierr)
      return
    end if
    p_sendbuf = addr(sendbuf)
    p_recvbuf = addr(recvbuf)
    if (is_in_place(p_sendbuf)) then
      p_sendbuf = c_in_place()
    else if (.not. buffer_ok('xc_iexscan', p_sendbuf, 0_int64, ierr)) then
      return
    end if
    if (.not. buffer_ok('xc_iexscan', p_recvbuf, 0_int64, ierr)) return
    if (.not. count_ok('xc_iexscan', count, ierr)) return
    call finish(c_xc_iexscan(p_sendbuf, p_recvbuf, int(count, c_size_t), int(dtype, c_int), int(op, c_int), &
        comm%ptr, req), 'xc_iexscan', ierr)
  end subroutine xc_iexscan_i8

  subroutine xc_iexscan_i4(sendbuf, recvbuf, count, dtype, op, comm, req, ierr)
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    integer(int32), intent(in) :: count
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: dtype, op
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    call xc_iexscan_i8(sendbuf, recvbuf, int(count, int64), dtype, op, comm, req, ierr)
  end subroutine xc_iexscan_i4

  !> Between xc_group_start and xc_group_end, calls only start; xc_group_end
  !> waits for all of them. Buffers must stay valid (and contiguous: a copy
  !> made for a blocking call would not outlive it) until xc_group_end.
  subroutine xc_group_start(ierr)
    integer, intent(out), optional :: ierr
    call finish(c_xc_group_start(), 'xc_group_start', ierr)
  end subroutine xc_group_start

  subroutine xc_group_end(ierr)
    integer, intent(out), optional :: ierr
    call finish(c_xc_group_end(), 'xc_group_end', ierr)
  end subroutine xc_group_end

  ! ==== memory for communication ================================================

  !> bytes of memory that comm's ops move fastest (host memory aligned to
  !> 2 MiB, on 2 MiB pages where the kernel offers them, zero-filled), as a
  !> type(c_ptr): view it with c_f_pointer(ptr, array, shape) and pass the
  !> array to any op. Local, not collective. bytes 0 gives c_null_ptr, and so
  !> does a failure. Free it with xc_mem_free (as mpi_f08's MPI_Alloc_mem).
  subroutine xc_mem_alloc_i8(comm, bytes, ptr, ierr)
    type(xc_comm), intent(in) :: comm
    integer(int64), intent(in) :: bytes
    type(c_ptr), intent(out) :: ptr
    integer, intent(out), optional :: ierr
    ptr = c_null_ptr  ! and so it stays: a failed xc_mem_alloc leaves its output alone
    if (.not. count_ok('xc_mem_alloc', bytes, ierr)) return
    call finish(c_xc_mem_alloc(comm%ptr, int(bytes, c_size_t), ptr), 'xc_mem_alloc', ierr)
  end subroutine xc_mem_alloc_i8

  subroutine xc_mem_alloc_i4(comm, bytes, ptr, ierr)
    type(xc_comm), intent(in) :: comm
    integer(int32), intent(in) :: bytes
    type(c_ptr), intent(out) :: ptr
    integer, intent(out), optional :: ierr
    call xc_mem_alloc_i8(comm, int(bytes, int64), ptr, ierr)
  end subroutine xc_mem_alloc_i4

  !> Give back memory from xc_mem_alloc and set ptr to c_null_ptr on success.
  !> comm may be XC_COMM_NULL (the memory outlives its communicator);
  !> c_null_ptr does nothing. A pointer freed already (through a copy of it),
  !> or one xc_mem_alloc did not return, is XC_ERR_INVALID_ARGUMENT and frees
  !> nothing. Pointers made from it with c_f_pointer dangle afterwards.
  subroutine xc_mem_free(comm, ptr, ierr)
    type(xc_comm), intent(in) :: comm
    type(c_ptr), intent(inout) :: ptr
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = c_xc_mem_free(comm%ptr, ptr)
    if (rc == XC_SUCCESS) ptr = c_null_ptr
    call finish(rc, 'xc_mem_free', ierr)
  end subroutine xc_mem_free

  ! ==== device memory and streams ================================================

  !> A new stream on comm's device (xc_stream_create); release it with
  !> xc_stream_destroy. Without a device: XC_ERR_UNSUPPORTED.
  subroutine xc_stream_create(comm, stream, ierr)
    type(xc_comm), intent(in) :: comm
    type(xc_stream), intent(out) :: stream
    integer, intent(out), optional :: ierr
    call finish(c_xc_stream_create(comm%ptr, stream), 'xc_stream_create', ierr)
  end subroutine xc_stream_create

  !> Wrap the application's cudaStream_t (c_null_ptr: the legacy default
  !> stream). xcomm never destroys the CUDA stream, which must outlive the
  !> wrapper; xc_stream_destroy releases the wrapper only.
  subroutine xc_stream_wrap(comm, cuda_stream, stream, ierr)
    type(xc_comm), intent(in) :: comm
    type(c_ptr), intent(in) :: cuda_stream
    type(xc_stream), intent(out) :: stream
    integer, intent(out), optional :: ierr
    call finish(c_xc_stream_wrap(comm%ptr, cuda_stream, stream), 'xc_stream_wrap', ierr)
  end subroutine xc_stream_wrap

  !> Wait for the work xcomm enqueued on stream, unbind it from every
  !> communicator and release it; stream becomes XC_STREAM_NULL (whatever
  !> the result: the library releases it either way). ierr: the stream's
  !> first error, if any. XC_STREAM_NULL does nothing.
  subroutine xc_stream_destroy(stream, ierr)
    type(xc_stream), intent(inout) :: stream
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = c_xc_stream_destroy(stream%ptr)
    stream%ptr = c_null_ptr
    call finish(rc, 'xc_stream_destroy', ierr)
  end subroutine xc_stream_destroy

  !> Block until every op xcomm enqueued on stream has completed; ierr: the
  !> first error of those ops (which clears it).
  subroutine xc_stream_synchronize(stream, ierr)
    type(xc_stream), intent(in) :: stream
    integer, intent(out), optional :: ierr
    call finish(c_xc_stream_synchronize(stream%ptr), 'xc_stream_synchronize', ierr)
  end subroutine xc_stream_synchronize

  !> Route comm's device-memory ops to stream: its collectives (target
  !> XC_BIND_COLLECTIVES) or its point-to-point ops with peer rank target.
  !> XC_STREAM_NULL unbinds (back to comm's default stream). Local.
  subroutine xc_stream_bind(comm, stream, target, ierr)
    type(xc_comm), intent(in) :: comm
    type(xc_stream), intent(in) :: stream
    integer, intent(in) :: target
    integer, intent(out), optional :: ierr
    call finish(c_xc_stream_bind(comm%ptr, stream%ptr, int(target, c_int)), 'xc_stream_bind', ierr)
  end subroutine xc_stream_bind

  !> bytes of device memory on comm's device that peers on this host can map
  !> (xc_mem_alloc_device), as a type(c_ptr) (c_null_ptr for 0 bytes or a
  !> failure). View it with c_f_pointer and pass the array to any op; free
  !> it with xc_mem_free. Without a device: XC_ERR_UNSUPPORTED.
  subroutine xc_mem_alloc_device_i8(comm, bytes, ptr, ierr)
    type(xc_comm), intent(in) :: comm
    integer(int64), intent(in) :: bytes
    type(c_ptr), intent(out) :: ptr
    integer, intent(out), optional :: ierr
    ptr = c_null_ptr
    if (.not. count_ok('xc_mem_alloc_device', bytes, ierr)) return
    call finish(c_xc_mem_alloc_device(comm%ptr, int(bytes, c_size_t), ptr), 'xc_mem_alloc_device', ierr)
  end subroutine xc_mem_alloc_device_i8

  subroutine xc_mem_alloc_device_i4(comm, bytes, ptr, ierr)
    type(xc_comm), intent(in) :: comm
    integer(int32), intent(in) :: bytes
    type(c_ptr), intent(out) :: ptr
    integer, intent(out), optional :: ierr
    call xc_mem_alloc_device_i8(comm, int(bytes, int64), ptr, ierr)
  end subroutine xc_mem_alloc_device_i4

  !> Register bytes of device memory at ptr, used again and again
  !> (xc_buffer_register); the memory must stay allocated until
  !> xc_buffer_deregister. Host memory: XC_ERR_INVALID_ARGUMENT.
  subroutine xc_buffer_register_i8(comm, ptr, bytes, buf, ierr)
    type(xc_comm), intent(in) :: comm
    type(c_ptr), intent(in) :: ptr
    integer(int64), intent(in) :: bytes
    type(xc_buffer), intent(out) :: buf
    integer, intent(out), optional :: ierr
    if (.not. count_ok('xc_buffer_register', bytes, ierr)) return
    call finish(c_xc_buffer_register(comm%ptr, ptr, int(bytes, c_size_t), buf), 'xc_buffer_register', ierr)
  end subroutine xc_buffer_register_i8

  subroutine xc_buffer_register_i4(comm, ptr, bytes, buf, ierr)
    type(xc_comm), intent(in) :: comm
    type(c_ptr), intent(in) :: ptr
    integer(int32), intent(in) :: bytes
    type(xc_buffer), intent(out) :: buf
    integer, intent(out), optional :: ierr
    call xc_buffer_register_i8(comm, ptr, int(bytes, int64), buf, ierr)
  end subroutine xc_buffer_register_i4

  !> Release a registration (not the memory); buf becomes XC_BUFFER_NULL.
  !> XC_BUFFER_NULL does nothing.
  subroutine xc_buffer_deregister(buf, ierr)
    type(xc_buffer), intent(inout) :: buf
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = c_xc_buffer_deregister(buf%ptr)
    buf%ptr = c_null_ptr
    call finish(rc, 'xc_buffer_deregister', ierr)
  end subroutine xc_buffer_deregister

  ! ---- redistribution --------------------------------------------------------

  !> General layout: box b spans offsets(:, b) + [0, extents(:, b)) (0-based,
  !> C dimension order) and lives on rank owners(b).
  subroutine xc_layout_boxes(comm, ndim, global_shape, nboxes, offsets, extents, owners, layout, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: ndim, nboxes
    integer(int64), intent(in) :: global_shape(:), offsets(:, :), extents(:, :)
    integer, intent(in) :: owners(:)
    type(xc_layout), intent(out) :: layout
    integer, intent(out), optional :: ierr
    integer(c_size_t) :: shp(max(1, ndim))
    if (size(global_shape) < ndim .or. size(owners) < nboxes .or. &
        (nboxes > 0 .and. (size(offsets, 1) /= ndim .or. size(extents, 1) /= ndim .or. &
                           size(offsets, 2) < nboxes .or. size(extents, 2) < nboxes))) then
      call fail('xc_layout_boxes', 'global_shape, offsets(ndim, nboxes), extents(ndim, nboxes) or owners too short', &
                ierr)
      return
    end if
    shp = 0
    if (ndim > 0) shp(1:ndim) = int(global_shape(1:ndim), c_size_t)
    call finish(c_xc_layout_boxes(comm%ptr, int(ndim, c_int), shp, int(nboxes, c_size_t), &
        reshape(int(offsets, c_size_t), [max(1, size(offsets))], pad=[0_c_size_t]), &
        reshape(int(extents, c_size_t), [max(1, size(extents))], pad=[0_c_size_t]), &
        reshape(int(owners, c_int), [max(1, size(owners))], pad=[0_c_int]), layout), 'xc_layout_boxes', ierr)
  end subroutine xc_layout_boxes

  !> DTensor-style layout: mesh_shape over the ranks (row-major), one placement per mesh dimension.
  subroutine xc_layout_mesh(comm, ndim, global_shape, mesh_ndim, mesh_shape, placements, layout, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: ndim, mesh_ndim
    integer(int64), intent(in) :: global_shape(:)
    integer, intent(in) :: mesh_shape(:)
    type(xc_placement), intent(in) :: placements(:)
    type(xc_layout), intent(out) :: layout
    integer, intent(out), optional :: ierr
    if (size(global_shape) < ndim .or. size(mesh_shape) < mesh_ndim .or. size(placements) < mesh_ndim) then
      call fail('xc_layout_mesh', 'global_shape, mesh_shape or placements is shorter than its count', ierr)
      return
    end if
    call finish(c_xc_layout_mesh(comm%ptr, int(ndim, c_int), int(global_shape, c_size_t), int(mesh_ndim, c_int), &
        int(mesh_shape, c_int), placements, layout), 'xc_layout_mesh', ierr)
  end subroutine xc_layout_mesh

  !> ScaLAPACK block-cyclic layout (see the header); grid_order and storage are XC_ORDER_*.
  subroutine xc_layout_block_cyclic(comm, rows, cols, mb, nb, nprow, npcol, rsrc, csrc, grid_order, storage, &
                                    layout, ierr)
    type(xc_comm), intent(in) :: comm
    integer, intent(in) :: rows, cols, mb, nb, nprow, npcol, rsrc, csrc, grid_order, storage
    type(xc_layout), intent(out) :: layout
    integer, intent(out), optional :: ierr
    if (rows < 0 .or. cols < 0 .or. mb < 0 .or. nb < 0) then
      call fail('xc_layout_block_cyclic', 'rows, cols, mb and nb must not be negative', ierr)
      return
    end if
    call finish(c_xc_layout_block_cyclic(comm%ptr, int(rows, c_size_t), int(cols, c_size_t), int(mb, c_size_t), &
        int(nb, c_size_t), int(nprow, c_int), int(npcol, c_int), int(rsrc, c_int), int(csrc, c_int), &
        int(grid_order, c_int), int(storage, c_int), layout), 'xc_layout_block_cyclic', ierr)
  end subroutine xc_layout_block_cyclic

  !> count: elements of this rank's local buffer under layout.
  subroutine xc_layout_local_count(layout, count, ierr)
    type(xc_layout), intent(in) :: layout
    integer(int64), intent(out) :: count
    integer, intent(out), optional :: ierr
    integer(c_size_t) :: v
    v = 0
    call finish(c_xc_layout_local_count(layout%ptr, v), 'xc_layout_local_count', ierr)
    count = int(v, int64)
  end subroutine xc_layout_local_count

  !> Releases the layout and sets it to null.
  subroutine xc_layout_free(layout, ierr)
    type(xc_layout), intent(inout) :: layout
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = c_xc_layout_free(layout%ptr)
    if (rc == XC_SUCCESS) layout%ptr = c_null_ptr
    call finish(rc, 'xc_layout_free', ierr)
  end subroutine xc_layout_free

  subroutine xc_redist_config_init(cfg, ierr)
    type(xc_redist_config), intent(out) :: cfg
    integer, intent(out), optional :: ierr
    call finish(c_xc_redist_config_init(cfg, c_sizeof(cfg)), 'xc_redist_config_init', ierr)
  end subroutine xc_redist_config_init

  !> Collective: plan moving arrays of dtype from layout src to dst.
  subroutine xc_redistribute_plan_nocfg(src, dst, dtype, plan, ierr)
    type(xc_layout), intent(in) :: src, dst
    integer, intent(in) :: dtype
    type(xc_plan), intent(out) :: plan
    integer, intent(out), optional :: ierr
    call finish(c_xc_redistribute_plan(src%ptr, dst%ptr, int(dtype, c_int), plan=plan), 'xc_redistribute_plan', ierr)
  end subroutine xc_redistribute_plan_nocfg

  subroutine xc_redistribute_plan_cfg(src, dst, dtype, config, plan, ierr)
    type(xc_layout), intent(in) :: src, dst
    integer, intent(in) :: dtype
    type(xc_redist_config), intent(in) :: config
    type(xc_plan), intent(out) :: plan
    integer, intent(out), optional :: ierr
    call finish(c_xc_redistribute_plan(src%ptr, dst%ptr, int(dtype, c_int), config, plan), 'xc_redistribute_plan', &
                ierr)
  end subroutine xc_redistribute_plan_cfg

  !> Collective: run the plan (sendbuf under src, recvbuf under dst).
  subroutine xc_redistribute(plan, sendbuf, recvbuf, ierr)
    type(xc_plan), intent(in) :: plan
    type(*), dimension(..), intent(in), target, contiguous :: sendbuf
    type(*), dimension(..), intent(inout), target, contiguous :: recvbuf
    integer, intent(out), optional :: ierr
    call finish(c_xc_redistribute(plan%ptr, addr(sendbuf), addr(recvbuf)), 'xc_redistribute', ierr)
  end subroutine xc_redistribute

  !> Start the plan; req completes with xc_wait. Buffers must be contiguous.
  subroutine xc_iredistribute(plan, sendbuf, recvbuf, req, ierr)
    type(xc_plan), intent(in) :: plan
    type(*), dimension(..), intent(in), target, asynchronous :: sendbuf
    type(*), dimension(..), intent(inout), target, asynchronous :: recvbuf
    type(xc_request), intent(out) :: req
    integer, intent(out), optional :: ierr
    if (.not. is_contiguous(sendbuf) .or. .not. is_contiguous(recvbuf)) then
      call fail('xc_iredistribute', 'sendbuf and recvbuf must be contiguous (non-blocking buffers cannot be copied)', &
                ierr)
      return
    end if
    call finish(c_xc_iredistribute(plan%ptr, addr(sendbuf), addr(recvbuf), req), 'xc_iredistribute', ierr)
  end subroutine xc_iredistribute

  subroutine xc_plan_info(plan, info, ierr)
    type(xc_plan), intent(in) :: plan
    type(xc_plan_info_t), intent(out) :: info
    integer, intent(out), optional :: ierr
    info%size = c_sizeof(info)
    call finish(c_xc_plan_info(plan%ptr, info), 'xc_plan_info', ierr)
  end subroutine xc_plan_info

  !> perm(j + 1): the rank that should take rank j's part of dst (COSTA's relabelling).
  subroutine xc_plan_relabel(plan, perm, bytes_saved, ierr)
    type(xc_plan), intent(in) :: plan
    integer, intent(out) :: perm(:)
    integer(int64), intent(out) :: bytes_saved
    integer, intent(out), optional :: ierr
    integer(c_int) :: p(max(1, size(perm)))
    integer(c_int64_t) :: saved
    saved = 0
    p = 0
    call finish(c_xc_plan_relabel(plan%ptr, p, saved), 'xc_plan_relabel', ierr)
    perm = int(p(1:size(perm)))
    bytes_saved = int(saved, int64)
  end subroutine xc_plan_relabel

  !> Collective: releases the plan and sets it to null.
  subroutine xc_plan_free(plan, ierr)
    type(xc_plan), intent(inout) :: plan
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = c_xc_plan_free(plan%ptr)
    plan%ptr = c_null_ptr
    call finish(rc, 'xc_plan_free', ierr)
  end subroutine xc_plan_free

end module xcomm
