! example.f90 -- xcomm from Fortran: start, reduce, talk to the neighbours,
! split into two groups and reduce inside each. Checks its own results.
!
! Build (installed xcomm):
!   gfortran example.f90 $(pkg-config --cflags --libs xcomm-fortran) -o example
! Run on 4 ranks of this host:
!   xcrun -n 4 ./example
program example
  use, intrinsic :: iso_fortran_env, only : real64, error_unit
  use xcomm
  implicit none

  type(xc_comm) :: world, half
  type(xc_status) :: st
  integer :: rank, nranks, left, right, color, hrank, hsize, i
  real(real64) :: x(4), total(4), from_left(4)
  integer :: members_sum, expected

  ! Every rank of the job joins the world (xcrun, torchrun, Slurm, ...).
  call xc_init(world)
  call xc_comm_rank(world, rank)
  call xc_comm_size(world, nranks)

  ! 1. Allreduce: the sum of every rank's vector, on every rank.
  x = [(real(rank * 10 + i, real64), i=1, 4)]
  call xc_allreduce(x, total, 4, XC_FLOAT64, XC_SUM, world)
  do i = 1, 4
    call expect(total(i) == 10 * nranks * (nranks - 1) / 2 + nranks * i, 'allreduce')
  end do

  ! 2. Send to the right neighbour, receive from the left one. sendrecv never
  !    deadlocks, whatever the message size.
  right = mod(rank + 1, nranks)
  left = mod(rank - 1 + nranks, nranks)
  call xc_sendrecv(x, 4, right, 0, from_left, 4, left, 0, XC_FLOAT64, world, st)
  call expect(st%source == left .and. st%bytes == 4 * 8, 'status')
  call expect(all(from_left == [(real(left * 10 + i, real64), i=1, 4)]), 'neighbour data')

  ! 3. Two groups: even and odd world ranks. In-place sum of world ranks inside
  !    each group.
  color = mod(rank, 2)
  call xc_comm_split(world, color, rank, half)
  call xc_comm_rank(half, hrank)
  call xc_comm_size(half, hsize)
  members_sum = rank
  call xc_allreduce(XC_IN_PLACE, members_sum, 1, XC_INT32, XC_SUM, half)
  expected = sum([(i, i=color, nranks - 1, 2)])
  call expect(members_sum == expected, 'allreduce inside the group')
  call expect(hrank == rank / 2, 'rank inside the group')

  if (rank == 0) write (*, '(a,i0,a,i0,a)') 'example: ', nranks, ' ranks, groups of ', hsize, ': ok'
  call xc_comm_free(half)
  call xc_comm_free(world)

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (error_unit, '(a,i0,a,a)') 'example: rank ', rank, ' got a wrong result: ', what
      error stop 1
    end if
  end subroutine expect

end program example
