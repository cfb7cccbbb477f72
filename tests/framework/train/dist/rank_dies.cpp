// rank_dies MODE: a 2-rank job in which rank 1 stops taking part, for rank_dies.sh. Rank 0 keeps
// all-reducing; the job must end with a non-zero status within seconds, not hang.
//   exit   rank 1 leaves with std::_Exit(3) (a crash); mpirun ends the job
//   hang   rank 1 stays alive but stops calling collectives; rank 0's collective times out
//          (EMBER_DIST_TIMEOUT_S) with an ember::Error, and abort() ends the job
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ember.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "exit" && mode != "hang") {
    std::fprintf(stderr, "usage: rank_dies exit|hang\n");
    return 2;
  }
  ember::dist::Communicator& c = ember::dist::init();
  try {
    for (int step = 0;; ++step) {
      if (c.rank() == 1 && step == 3) {
        if (mode == "exit") std::_Exit(3);
        for (;;) ::pause();  // alive, silent
      }
      ember::Tensor x = ember::ones({1000});
      c.all_reduce(x);
    }
  } catch (const ember::Error& e) {
    std::fprintf(stderr, "rank %d: error: %s\n", c.rank(), e.what());
    c.abort(1);
  }
}
