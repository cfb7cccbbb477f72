// The ranks of a data-parallel job must train with the same settings: a rank with another batch
// size or data limit runs another number of steps, so its collectives stop matching the others'
// (MPI collectives of different sizes on different ranks are undefined: the job crashed), and a
// rank with another seed or learning rate silently trains another model. check_same_settings
// compares a fingerprint of every setting at start-up, before any collective whose size depends
// on them, and on a mismatch raises the same ember::Error on every rank, naming the first setting
// that differs and both ranks' values.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "framework/train/dist/communicator.h"

namespace ember::dist {

// `settings` maps each setting's name (the flag, "--batch-size") to its value, in the order to
// report them. Two collectives of fixed size compare lengths and hashes; only on a mismatch is the
// text itself gathered. (The programs prefix the message with their own name.)
void check_same_settings(Communicator& comm, const nlohmann::ordered_json& settings);

// The first setting whose value differs between `a` (rank `ra`) and `b` (rank `rb`), as the
// message check_same_settings raises; empty when they are equal.
std::string first_difference(const nlohmann::ordered_json& a, int ra, const nlohmann::ordered_json& b, int rb);

}  // namespace ember::dist
