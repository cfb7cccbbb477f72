// Waiting with a deadline for something another process does (an MPI request, a GPU event, a
// file that rank 0 writes): a rank that died must become an error on the others, not a hang.
#pragma once
#include <functional>

namespace ember::dist {

// Calls `done` until it returns true (then true) or `timeout_s` seconds have passed (then false).
// Spins for the first polls (between processes of one machine the answer usually comes within
// microseconds), then yields the core (on a busy machine the rank we wait for may need it), then
// naps `nap_s` between polls. Exceptions from `done` pass through.
bool poll_until(const std::function<bool()>& done, double timeout_s, double nap_s = 200e-6);

}  // namespace ember::dist
