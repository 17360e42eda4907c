/* A serial device in raw mode (serial.h). */
#define _POSIX_C_SOURCE 200809L
#include "serial.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

static speed_t speed_of(unsigned baud)
{
    switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    default: return B0;
    }
}

int serial_open(const char *path, unsigned baud)
{
    struct termios tio;
    speed_t speed = speed_of(baud);
    int fd;

    if (speed == B0) {
        errno = EINVAL;
        return -1;
    }
    fd = open(path, O_RDWR | O_NOCTTY);
    if (fd < 0)
        return -1;
    if (tcgetattr(fd, &tio) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    /* Raw: no input translation, no output processing, no echo, no signals,
     * 8 data bits, no parity, one stop bit, reads return what has arrived. */
    tio.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF | IXANY);
    tio.c_oflag &= ~(tcflag_t)OPOST;
    tio.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    tio.c_cflag &= ~(tcflag_t)(CSIZE | PARENB | CSTOPB);
    tio.c_cflag |= (tcflag_t)(CS8 | CREAD | CLOCAL);
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (cfsetispeed(&tio, speed) != 0 || cfsetospeed(&tio, speed) != 0 ||
        tcsetattr(fd, TCSANOW, &tio) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int serial_write_all(int fd, const uint8_t *data, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd p;
            p.fd = fd;
            p.events = POLLOUT;
            (void)poll(&p, 1, 100);
            continue;
        }
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}
