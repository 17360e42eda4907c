/* The store port (pb_store_port) on a file: two slots of PB_STATE_IMAGE_LEN
 * bytes, slot 0 then slot 1. Bytes past the end of the file read as erased
 * (0xFF). A write returns once fdatasync has. POSIX. */
#ifndef PB_FILE_STORE_H
#define PB_FILE_STORE_H

#include "parkbox.h"

typedef struct pb_file_store {
    int fd;
} pb_file_store;

/* Opens (creating) `path`. Returns false with errno set on failure. */
bool pb_file_store_open(pb_file_store *fs, const char *path, pb_store_port *port);
void pb_file_store_close(pb_file_store *fs);

#endif
