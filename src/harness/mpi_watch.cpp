// Every blocking MPI call the suites make, marked for the watchdog (harness/watchdog.hpp) through
// MPI's profiling interface: these definitions take the place of the library's for our code, mark
// the wait (base/activity.hpp: a few relaxed stores, no clock read) and call the PMPI_ entry.
// Thus a rank stuck in a set-up collective, a gather of the results or a broadcast of the run's
// state is noticed like one stuck in a gradient exchange, without a mark at every call site. The
// explicit marks (an exchange's "allreduce step", its bucket and peer) nest around these and name
// what the call was for.
//
// Non-blocking calls (Isend, Irecv, Iallreduce, Test*) are not marked: they return at once.
#include <mpi.h>

#include "base/activity.hpp"

using hpcnn::activity::WaitKind;
using hpcnn::activity::WaitScope;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  const WaitScope waiting("MPI_Barrier", -1, -1, WaitKind::MpiCall);
  return PMPI_Barrier(comm);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const WaitScope waiting("MPI_Bcast", -1, -1, WaitKind::MpiCall);
  return PMPI_Bcast(buffer, count, type, root, comm);
}

int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const WaitScope waiting("MPI_Allreduce", -1, -1, WaitKind::MpiCall);
  return PMPI_Allreduce(send, recv, count, type, op, comm);
}

int MPI_Reduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  const WaitScope waiting("MPI_Reduce", -1, -1, WaitKind::MpiCall);
  return PMPI_Reduce(send, recv, count, type, op, root, comm);
}

int MPI_Gather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
               MPI_Datatype recv_type, int root, MPI_Comm comm) {
  const WaitScope waiting("MPI_Gather", -1, -1, WaitKind::MpiCall);
  return PMPI_Gather(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
}

int MPI_Gatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv, const int recv_counts[],
                const int displs[], MPI_Datatype recv_type, int root, MPI_Comm comm) {
  const WaitScope waiting("MPI_Gatherv", -1, -1, WaitKind::MpiCall);
  return PMPI_Gatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, root, comm);
}

int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                  MPI_Datatype recv_type, MPI_Comm comm) {
  const WaitScope waiting("MPI_Allgather", -1, -1, WaitKind::MpiCall);
  return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) {
  const WaitScope waiting("MPI_Comm_dup", -1, -1, WaitKind::MpiCall);
  return PMPI_Comm_dup(comm, out);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  const WaitScope waiting("MPI_Comm_split", -1, -1, WaitKind::MpiCall);
  return PMPI_Comm_split(comm, color, key, out);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* out) {
  const WaitScope waiting("MPI_Comm_split_type", -1, -1, WaitKind::MpiCall);
  return PMPI_Comm_split_type(comm, split_type, key, info, out);
}

int MPI_Send(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const WaitScope waiting("MPI_Send", -1, -1, WaitKind::MpiCall);
  return PMPI_Send(buffer, count, type, dest, tag, comm);
}

int MPI_Recv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const WaitScope waiting("MPI_Recv", -1, -1, WaitKind::MpiCall);
  return PMPI_Recv(buffer, count, type, source, tag, comm, status);
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  const WaitScope waiting("MPI_Wait", -1, -1, WaitKind::MpiCall);
  return PMPI_Wait(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  const WaitScope waiting("MPI_Waitall", -1, -1, WaitKind::MpiCall);
  return PMPI_Waitall(count, requests, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  const WaitScope waiting("MPI_Waitany", -1, -1, WaitKind::MpiCall);
  return PMPI_Waitany(count, requests, index, status);
}

}  // extern "C"
