/* Big-endian reads and writes, and the byte offsets of docs/protocol.md's
 * frames, named once for every file of the library. */
#ifndef PB_BYTES_H
#define PB_BYTES_H

#include <stdint.h>

static inline uint32_t pb_get_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint16_t pb_get_u16(const uint8_t *p)
{
    return (uint16_t)(((unsigned)p[0] << 8) | (unsigned)p[1]);
}

static inline void pb_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void pb_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Command frame (docs/protocol.md, Command frame). */
enum {
    PB_CMD_VERSION = 0,
    PB_CMD_KIND = 1,
    PB_CMD_KEY_ID = 2,
    PB_CMD_SCOPE = 6,
    PB_CMD_NONCE = 10,
    PB_CMD_BODY = 22
};

/* ACCESS body (and ACCESS_SIGNED's, in the clear). */
enum {
    PB_ACCESS_NOT_BEFORE = 0,
    PB_ACCESS_NOT_AFTER = 4,
    PB_ACCESS_MAX_ENTRIES = 8,
    PB_ACCESS_MAX_EXITS = 9,
    PB_ACCESS_MODULE_COUNT = 10,
    PB_ACCESS_MODULE_IDS = 11
};

/* Response frame (docs/protocol.md, Response frame). */
enum {
    PB_RSP_VERSION = 0,
    PB_RSP_STATUS = 1,
    PB_RSP_KIND = 2,
    PB_RSP_MODULE_ID = 3,
    PB_RSP_KEY_ID = 7,
    PB_RSP_BOX_SEQ = 11,
    PB_RSP_BOX_TIME = 15,
    PB_RSP_BATTERY_MV = 19,
    PB_RSP_BARRIER = 21,
    PB_RSP_DIRECTION = 22,
    PB_RSP_REMAINING = 23,
    PB_RSP_TAG = 24
};

#endif
