// A file store that hands rank 0's bytes (NCCL's unique id) to the other ranks of a job started
// without mpirun: every process gets RANK and WORLD_SIZE from its launcher and the path of one
// file that all of them can see (EMBER_RENDEZVOUS_FILE). Rank 0 writes the file atomically (a
// temporary file, then rename), the others poll until it is there and valid or the timeout has
// passed. Only the id goes through the file; the collectives themselves are NCCL's.
//
// The file holds a header (magic, version, world size, the job's token, who wrote it, the
// payload's length), the payload and a checksum of all that. A reader accepts it only when the
// checksum, the world size and the job token match, so a truncated or corrupted file, or one left
// by an earlier job, is never taken for the id; while the deadline has not passed it keeps waiting
// (rank 0 may be about to replace it), then it throws an ember::Error saying what it found.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "framework/train/dist/backend.h"

namespace ember::dist {

// The environment variable that names the file.
inline constexpr const char* kRendezvousFileVariable = "EMBER_RENDEZVOUS_FILE";

// The job's token from the launcher's environment: EMBER_RENDEZVOUS_JOB, else the first of
// SLURM_JOB_ID, TORCHELASTIC_RUN_ID, PBS_JOBID, LSB_JOBID, FLUX_JOB_ID, as "NAME=value"; "" when
// none is set (then only the world size and rank 0's removal of the file after the start guard
// against a stale file; give each job a fresh path).
std::string rendezvous_job_token();

// Rank 0's side: writes `payload` to `path` for `world` ranks of job `job`. ember::Error when the
// file cannot be written (naming the path and the reason).
void publish_rendezvous(const std::string& path, const std::string& job, int world, const std::vector<uint8_t>& payload);

// Another rank's side: the payload (of `size` bytes) once `path` holds a valid file for this job
// and world size; ember::Error naming the file, the rank, the seconds waited and what was found
// (nothing, a truncated or corrupted file, another job's or world size's) after `timeout_s`.
std::vector<uint8_t> await_rendezvous(const std::string& path, const std::string& job, int world, int rank,
                                      size_t size, double timeout_s);

// What is wrong with `file` as the rendezvous of (`job`, `world`, `size` payload bytes), or "" when
// it is valid (then the payload is in *payload).
std::string parse_rendezvous(const std::vector<uint8_t>& file, const std::string& job, int world, size_t size,
                             std::vector<uint8_t>* payload);

// Removes the file once every rank has read it (rank 0, after NCCL's start returned); a file that
// is already gone is fine.
void remove_rendezvous(const std::string& path);

// A ShareBytes (backend.h) over the file: rank 0 publishes, the others await (timeout_s).
ShareBytes share_through_file(const std::string& path, const std::string& job, int rank, int world, double timeout_s);

}  // namespace ember::dist
