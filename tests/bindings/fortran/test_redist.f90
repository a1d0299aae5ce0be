! Redistribution from Fortran: a 1-D mesh Shard(0) -> Replicate of a C
! [rows][cols] array (Fortran a(cols, rows)), a block-cyclic -> block-cyclic
! move of a ScaLAPACK matrix, plan info and relabelling. Every rank computes
! the global values (v = 1000 * i + j) and checks its own part.
program test_redist
  use, intrinsic :: iso_fortran_env, only : int64, error_unit
  use xcomm
  implicit none
  type(xc_comm) :: world
  type(xc_layout) :: src, dst
  type(xc_plan) :: plan
  type(xc_plan_info_t) :: info
  type(xc_placement) :: pl(1)
  type(xc_request) :: req
  integer :: rank, nranks, ierr, i, j, lo, hi, chunk, li, lj, p
  integer, parameter :: rows = 7, cols = 5
  integer(int64) :: count, saved
  double precision, allocatable :: mine(:, :), whole(:, :), a(:, :), b(:, :)
  integer, allocatable :: perm(:)

  call xc_init(world)
  call xc_comm_rank(world, rank)
  call xc_comm_size(world, nranks)

  ! Shard(0) of the C array [rows][cols]: rows lo..hi-1 (torch.chunk).
  chunk = (rows + nranks - 1) / nranks
  lo = min(rows, rank * chunk)
  hi = min(rows, lo + chunk)
  allocate(mine(cols, max(1, hi - lo)), whole(cols, rows))
  do i = lo, hi - 1
    do j = 0, cols - 1
      mine(j + 1, i - lo + 1) = 1000 * i + j
    end do
  end do
  pl(1) = xc_placement(kind=XC_PLACEMENT_SHARD, dim=0)
  call xc_layout_mesh(world, 2, [int(rows, int64), int(cols, int64)], 1, [nranks], pl, src)
  pl(1) = xc_placement(kind=XC_PLACEMENT_REPLICATE)
  call xc_layout_mesh(world, 2, [int(rows, int64), int(cols, int64)], 1, [nranks], pl, dst)
  call xc_layout_local_count(src, count)
  call check(count == int((hi - lo) * cols, int64), 'local count')
  call xc_redistribute_plan(src, dst, XC_FLOAT64, plan)
  whole = -1
  call xc_redistribute(plan, mine, whole)
  do i = 0, rows - 1
    do j = 0, cols - 1
      call check(whole(j + 1, i + 1) == 1000 * i + j, 'allgathered value')
    end do
  end do
  call xc_plan_info(plan, info)
  call check(info%bytes_received == int((rows - (hi - lo)) * cols * 8, int64), 'bytes received')
  call check(nranks == 1 .or. iand(info%step_kinds, XC_REDIST_STEP_ALLGATHER) /= 0, 'an allgather step')
  whole = -1
  call xc_iredistribute(plan, mine, whole, req)
  call xc_wait(req)
  call check(whole(cols, rows) == 1000 * (rows - 1) + cols - 1, 'non-blocking run')
  allocate(perm(nranks))
  call xc_plan_relabel(plan, perm, saved)
  call check(all(perm >= 0 .and. perm < nranks), 'relabel permutation')
  call xc_plan_free(plan)
  call xc_layout_free(src)
  call xc_layout_free(dst)

  ! Block-cyclic: 1 x n grid, 2 x 2 blocks -> n x 1 grid, 3 x 1 blocks,
  ! both stored column-major as ScaLAPACK does.
  call xc_layout_block_cyclic(world, rows, cols, 2, 2, 1, nranks, 0, 0, XC_ORDER_ROW_MAJOR, XC_ORDER_COL_MAJOR, src)
  call xc_layout_block_cyclic(world, rows, cols, 3, 1, nranks, 1, 0, 0, XC_ORDER_ROW_MAJOR, XC_ORDER_COL_MAJOR, dst)
  allocate(a(rows, max(1, local_n(cols, 2, rank, nranks))), b(max(1, local_n(rows, 3, rank, nranks)), cols))
  do i = 0, rows - 1
    do j = 0, cols - 1
      if (mod(j / 2, nranks) == rank) then
        lj = (j / 2 / nranks) * 2 + mod(j, 2)
        a(i + 1, lj + 1) = 1000 * i + j
      end if
    end do
  end do
  call xc_redistribute_plan(src, dst, XC_FLOAT64, plan)
  call xc_redistribute(plan, a, b)
  do i = 0, rows - 1
    p = mod(i / 3, nranks)
    if (p /= rank) cycle
    li = (i / 3 / nranks) * 3 + mod(i, 3)
    do j = 0, cols - 1
      call check(b(li + 1, j + 1) == 1000 * i + j, 'block-cyclic value')
    end do
  end do
  call xc_plan_free(plan)
  call xc_layout_free(src)
  call xc_layout_free(dst)

  ! A bad layout: the error comes back in ierr.
  call xc_layout_boxes(world, 2, [4_int64, 4_int64], 1, reshape([0_int64, 0_int64], [2, 1]), &
                       reshape([2_int64, 4_int64], [2, 1]), [0], src, ierr)
  call check(ierr == XC_ERR_INVALID_ARGUMENT, 'a layout with a gap fails')

  call xc_comm_free(world)
  if (rank == 0) print '(a)', 'fortran redist: ok'

contains

  ! Elements of n in blocks of nb that process p of np holds (numroc, source 0).
  integer function local_n(n, nb, p, np)
    integer, intent(in) :: n, nb, p, np
    integer :: k
    local_n = 0
    do k = 0, n - 1
      if (mod(k / nb, np) == p) local_n = local_n + 1
    end do
  end function local_n

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (error_unit, '(a, i0, 2a)') 'rank ', rank, ': failed: ', what
      error stop 1
    end if
  end subroutine check
end program test_redist
