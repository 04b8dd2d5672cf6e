// Figures measured on this host once and kept between processes: every
// compile and tuning session on one machine then sees the same value. A
// measurement can come out otherwise while the core's other hardware thread
// is busy, and a figure that is part of the tuning log's target must not
// change between a session and its --resume.
#pragma once

#include <functional>
#include <string>
#include <system_error>

namespace tessel::codegen {

// ${TESSEL_CACHE:-$HOME/.cache/tessel}: where what is measured per machine is kept.
std::string tessel_cache_dir();

// tessel_cache_dir()/machine.json
std::string machine_cache_path();

// Writes `text` to a temporary file beside `path` and renames it over `path`
// (its folders made first): a reader sees the old file or the new one, whole.
// The error, if any; the temporary is then removed.
std::error_code replace_file(const std::string& path, const std::string& text);

// The count kept under `key` in the JSON object at `path`; else (no file, no
// key, a file that is not such an object, a value outside [1, 64])
// measure()'s, written there for the next process. A cache that cannot be
// written is only a cache: the measured value is returned all the same.
int cached_measurement(const std::string& path, const std::string& key, const std::function<int()>& measure);

}  // namespace tessel::codegen
