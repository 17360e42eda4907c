/* The store port on a file (file_store.h). */
#define _POSIX_C_SOURCE 200809L
#include "file_store.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static off_t where(unsigned slot, size_t offset)
{
    return (off_t)slot * (off_t)PB_STATE_IMAGE_LEN + (off_t)offset;
}

static bool in_slot(unsigned slot, size_t offset, size_t len)
{
    return slot < 2 && offset <= PB_STATE_IMAGE_LEN && len <= PB_STATE_IMAGE_LEN - offset;
}

static bool file_read(void *ctx, unsigned slot, size_t offset, uint8_t *out, size_t len)
{
    pb_file_store *fs = ctx;
    size_t done = 0;
    if (!in_slot(slot, offset, len))
        return false;
    while (done < len) {
        ssize_t n = pread(fs->fd, out + done, len - done, where(slot, offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0) {
            memset(out + done, 0xFF, len - done); /* past the end: erased */
            break;
        }
        done += (size_t)n;
    }
    return true;
}

static bool write_all(pb_file_store *fs, off_t at, const uint8_t *data, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(fs->fd, data + done, len - done, at + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return fdatasync(fs->fd) == 0;
}

static bool file_write(void *ctx, unsigned slot, size_t offset, const uint8_t *data, size_t len)
{
    if (!in_slot(slot, offset, len))
        return false;
    return write_all(ctx, where(slot, offset), data, len);
}

static bool file_erase(void *ctx, unsigned slot)
{
    uint8_t erased[256];
    size_t at;
    if (slot >= 2)
        return false;
    memset(erased, 0xFF, sizeof erased);
    for (at = 0; at < PB_STATE_IMAGE_LEN; at += sizeof erased) {
        size_t n = PB_STATE_IMAGE_LEN - at < sizeof erased ? PB_STATE_IMAGE_LEN - at : sizeof erased;
        ssize_t w = pwrite(((pb_file_store *)ctx)->fd, erased, n, where(slot, at));
        if (w != (ssize_t)n)
            return false;
    }
    return true; /* durable with the writes that follow (each syncs) */
}

bool pb_file_store_open(pb_file_store *fs, const char *path, pb_store_port *port)
{
    fs->fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fs->fd < 0)
        return false;
    port->ctx = fs;
    port->read = file_read;
    port->erase = file_erase;
    port->write = file_write;
    return true;
}

void pb_file_store_close(pb_file_store *fs)
{
    if (fs->fd >= 0)
        close(fs->fd);
    fs->fd = -1;
}
