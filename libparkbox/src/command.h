/* Parsing a command frame (docs/protocol.md, Command frame): the header
 * (steps 1 and 2) and each kind's body (step 5). Only reads, never copies. */
#ifndef PB_COMMAND_H
#define PB_COMMAND_H

#include "parkbox.h"

typedef struct pb_header {
    uint8_t kind;
    uint32_t key_id;            /* a smart key id, or the control sequence */
    uint32_t scope;             /* a parking id, or a module id */
    const uint8_t *nonce;       /* 12 bytes inside the frame */
} pb_header;

typedef struct pb_access_body {
    uint32_t not_before;
    uint32_t not_after;
    uint8_t max_entries;
    uint8_t max_exits;
    uint8_t module_count;
    const uint8_t *module_ids;  /* module_count big-endian u32 */
} pb_access_body;

typedef struct pb_revoke_body {
    uint8_t count;
    const uint8_t *entries;     /* count × (key_id u32 || until u32) */
} pb_revoke_body;

/* Byte sizes of the bodies of step 5. */
#define PB_TIME_SET_BODY_LEN 4u
#define PB_SET_ISSUER_BODY_LEN (2u * PB_PUBLIC_KEY_LEN)
#define PB_REVOKE_ENTRY_LEN 8u

bool pb_is_access_kind(uint8_t kind);
bool pb_is_control_kind(uint8_t kind);

/* Steps 1 and 2: PB_STATUS_OK with *h set, else MALFORMED or
 * UNSUPPORTED_VERSION. */
uint8_t pb_parse_header(const uint8_t *frame, size_t len, pb_header *h);

/* Step 5, each kind: true when the body has the length its kind requires. */
bool pb_parse_access_body(const uint8_t *body, size_t len, pb_access_body *out);
bool pb_parse_revoke_body(const uint8_t *body, size_t len, pb_revoke_body *out);
/* SET_ISSUER: 128 bytes; issuer_key a point on P-256, issuer_key_previous
 * one too or 64 zero bytes. */
bool pb_check_set_issuer_body(const pb_crypto_port *crypto, const uint8_t *body, size_t len);

bool pb_access_lists_module(const pb_access_body *body, uint32_t module_id);
bool pb_is_zero(const uint8_t *p, size_t n);

#endif
