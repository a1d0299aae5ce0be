! The default error handler: a failing call without ierr prints
! "xcomm: <routine> failed: ..." with xc_last_error() to stderr and stops the
! rank with "error stop" (non-zero exit). error_handler.sh checks both.
program error_handler
  use xcomm
  implicit none
  type(xc_comm) :: world
  integer :: rank, nranks, x(2)
  call xc_init(world)
  call xc_comm_rank(world, rank)
  call xc_comm_size(world, nranks)
  x = rank
  call xc_barrier(world)
  ! rank nranks is out of range: must not return
  call xc_send(x, 2, XC_INT32, nranks, 0, world)
  print '(a)', 'UNREACHABLE: xc_send returned after an error without ierr'
end program error_handler
