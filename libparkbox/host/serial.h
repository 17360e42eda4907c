/* A serial device in raw mode (termios): 8N1, no flow control, no echo, no
 * line discipline (docs/protocol.md, Sizes: 115200 baud by default). */
#ifndef PB_HOST_SERIAL_H
#define PB_HOST_SERIAL_H

#include <stddef.h>
#include <stdint.h>

/* Opens `path` at `baud` (one of 9600 .. 230400). Returns the descriptor, or
 * -1 with errno set. A pty takes the settings and ignores the speed. */
int serial_open(const char *path, unsigned baud);
/* Writes all of data; 0, or -1 with errno set. */
int serial_write_all(int fd, const uint8_t *data, size_t len);

#endif
