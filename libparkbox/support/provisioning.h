/* Reading a provisioning file (docs/protocol.md, Provisioning file) into a
 * pb_box_config and the issuer keys a new box starts with. */
#ifndef PB_PROVISIONING_H
#define PB_PROVISIONING_H

#include "parkbox.h"

typedef struct pb_provisioning {
    pb_box_config config;
    bool has_issuer_key;
    bool has_issuer_key_previous;
    uint8_t issuer_key[PB_PUBLIC_KEY_LEN];
    uint8_t issuer_key_previous[PB_PUBLIC_KEY_LEN];
} pb_provisioning;

/* Reads `path`. On error returns false with a one-line reason in `error`
 * (naming the field). Issuer keys are checked to be points on P-256 with
 * `crypto`. */
bool pb_provisioning_read(const char *path, const pb_crypto_port *crypto, pb_provisioning *out,
                          char *error, size_t error_cap);

#endif
