// Writing a whole buffer to a file descriptor, through short writes and
// interrupted calls: the tuning log's records and a measurement child's report.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace tessel::tune {

// False on an error (errno says which); every byte written otherwise.
inline bool write_all(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

}  // namespace tessel::tune
