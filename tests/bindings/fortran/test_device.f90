! Device memory through the Fortran bindings, run under xcrun with
! XC_DEVICE=emulated (meson: fortran_device_n2, suites bindings and device).
! On the emulated device "device memory" is host memory the library tags as
! device, so the test fills and checks it through c_f_pointer views. Without
! a device it exits 77 (skipped), unless XC_DEVICE=emulated asked for one,
! which is a failure. Any wrong value stops the rank with "error stop".
program test_device
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only : int64, real64, error_unit
  use xcomm
  implicit none

  integer, parameter :: n = 1000
  type(xc_comm) :: world
  type(xc_stream) :: s, t
  type(xc_buffer) :: reg
  type(c_ptr) :: px, py, pz
  ! contiguous: without it gfortran (12) passes a copy of a pointer array to
  ! the contiguous dummies of the blocking calls, and the copy is host memory
  real(real64), pointer, contiguous :: x(:), y(:), z(:)
  integer :: rank, nranks, ierr, i, left, right, nchecks
  integer, target :: hostword = 0
  character(len=32) :: device

  nchecks = 0
  call get_environment_variable('XC_DEVICE', device)
  call xc_init(world)
  call xc_comm_rank(world, rank)
  call xc_comm_size(world, nranks)
  right = mod(rank + 1, nranks)
  left = mod(rank - 1 + nranks, nranks)

  call xc_mem_alloc_device(world, int(n, int64) * 8, px, ierr)
  if (ierr == XC_ERR_UNSUPPORTED) then
    if (trim(device) == 'emulated') then
      write (error_unit, '(a)') 'FAIL: XC_DEVICE=emulated, yet xc_mem_alloc_device: ' // xc_last_error()
      error stop 1
    end if
    if (rank == 0) write (*, '(a)') 'fortran device test: no device here (run with XC_DEVICE=emulated); skipped'
    call xc_comm_free(world)
    stop 77
  end if
  call check(ierr == XC_SUCCESS .and. c_associated(px), 'xc_mem_alloc_device gives device memory')
  if (trim(device) /= 'emulated') then
    if (rank == 0) write (*, '(a)') 'fortran device test: reads device memory from Fortran: emulated device only'
    call xc_mem_free(world, px)
    call xc_comm_free(world)
    stop 77
  end if
  call xc_mem_alloc_device(world, n * 8, py)  ! default-integer bytes
  call xc_mem_alloc_device(world, int(n, int64) * 8, pz)
  call c_f_pointer(px, x, [n])
  call c_f_pointer(py, y, [n])
  call c_f_pointer(pz, z, [n])

  ! A stream of xcomm's own, passed to nothing but bindings.
  call xc_stream_create(world, s)
  call check(s /= XC_STREAM_NULL, 'xc_stream_create gives a stream')
  call xc_stream_bind(world, s, XC_BIND_COLLECTIVES)

  ! allreduce, out of place and in place, on the bound stream.
  x = [(real(rank * n + i, real64), i = 1, n)]
  y = -1
  call xc_allreduce(x, y, n, XC_FLOAT64, XC_SUM, world)
  call xc_allreduce(XC_IN_PLACE, x, n, XC_FLOAT64, XC_MAX, world)
  call xc_stream_synchronize(s)
  call check(all(y == [(real(n * nranks * (nranks - 1) / 2 + nranks * i, real64), i = 1, n)]), &
             'allreduce sum of device memory')
  call check(all(x == [(real((nranks - 1) * n + i, real64), i = 1, n)]), 'allreduce max in place of device memory')

  ! broadcast from the last rank.
  z = real(rank, real64)
  call xc_broadcast(z, n, XC_FLOAT64, nranks - 1, world)
  call xc_stream_synchronize(s)
  call check(all(z == real(nranks - 1, real64)), 'broadcast of device memory')

  ! A ring of sends and receives in a group, on a stream bound to each peer.
  call xc_stream_wrap(world, c_null_ptr, t)  ! the legacy default stream: any value on the emulated device
  call check(t /= XC_STREAM_NULL, 'xc_stream_wrap gives a stream')
  call xc_stream_bind(world, t, right)
  call xc_stream_bind(world, t, left)
  x = real(rank * 10, real64)
  y = -1
  call xc_group_start()
  call xc_send(x, n, XC_FLOAT64, right, 7, world)
  call xc_recv(y, n, XC_FLOAT64, left, 7, world)
  call xc_group_end()
  call xc_stream_synchronize(t)
  call check(all(y == real(left * 10, real64)), 'send/recv ring of device memory')

  ! A registered buffer, broadcast into again and again.
  call xc_buffer_register(world, pz, int(n, int64) * 8, reg)
  call check(reg /= XC_BUFFER_NULL, 'xc_buffer_register gives a registration')
  do i = 1, 3
    z = real(rank + i, real64)
    call xc_broadcast(z, n, XC_FLOAT64, 0, world)
    call xc_stream_synchronize(s)
    call check(all(z == real(i, real64)), 'broadcast into a registered buffer')
  end do
  call xc_buffer_deregister(reg)
  call check(reg == XC_BUFFER_NULL, 'xc_buffer_deregister nulls the handle')
  call xc_buffer_deregister(reg)  ! null: nothing to do

  ! Bad input: host memory cannot be registered.
  call xc_buffer_register(world, c_loc(hostword), 4, reg, ierr)
  call check(ierr == XC_ERR_INVALID_ARGUMENT, 'xc_buffer_register of host memory is XC_ERR_INVALID_ARGUMENT')

  call xc_stream_bind(world, XC_STREAM_NULL, XC_BIND_COLLECTIVES)
  call xc_stream_destroy(t)
  call check(t == XC_STREAM_NULL, 'xc_stream_destroy nulls the handle')
  call xc_stream_destroy(t)  ! null: nothing to do
  call xc_stream_destroy(s)
  call xc_mem_free(world, px)
  call xc_mem_free(world, py)
  call xc_mem_free(world, pz)
  call check(.not. c_associated(px), 'xc_mem_free of device memory nulls the pointer')
  call xc_comm_free(world)
  if (rank == 0) write (*, '(a,i0,a,i0,a)') 'fortran device test: ', nchecks, ' checks passed on rank 0 of ', &
    nranks, ' ranks'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    nchecks = nchecks + 1
    if (.not. ok) then
      write (error_unit, '(a,i0,a,a)') 'FAIL on rank ', rank, ': ', what
      flush (error_unit)
      error stop 1
    end if
  end subroutine check

end program test_device
