// Every file Ember writes goes through here, so that no reader ever sees a half-written file and
// no error leaves one behind: the bytes go to a fresh temporary file beside the target
// ("<name>.tmp.<pid>.<n>", created exclusively), are fsynced, and the temporary is renamed over
// the target; then the folder is fsynced so that the rename itself survives a power cut.
// A symlink is followed and its target replaced (the link stays a link); a target that exists and
// is not a regular file (a device such as /dev/full, a FIFO, a folder) is refused with an error.
// On any error (a full disk, a file-size limit) the temporary file is removed before the throw.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::io {

// Receives the file's bytes, piece by piece, in order.
using ByteSink = std::function<void(const void* data, size_t size)>;

// Writes what `produce` hands to its sink; the target is replaced only when all of it was written.
void write_file_atomic_streamed(const std::string& path, const std::function<void(const ByteSink&)>& produce);
void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes);
void write_text_atomic(const std::string& path, const std::string& text);

// The file that a write to `path` replaces: `path` with its symlinks followed (at most 40 links).
std::string resolve_write_target(const std::string& path);

// Removes the temporary files "<path>.tmp.<pid>[.<n>]" whose writer no longer runs (killed
// between create and rename); returns how many. write_file_atomic calls it first.
int remove_stale_temp_files(const std::string& path);

}  // namespace ember::io
