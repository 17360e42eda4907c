/* Encoding one serial link frame (docs/protocol.md, Serial link framing):
 * type || payload || CRC-16 (big-endian, over type || payload), COBS, 0x00. */
#include "parkbox.h"
#include "bytes.h"

#include <string.h>

/* type (1) + the longest payload + CRC (2). */
#define RAW_MAX (1u + PB_LINK_PAYLOAD_MAX + 2u)

size_t pb_link_encode(uint8_t type, const uint8_t *payload, size_t len,
                      uint8_t *out, size_t out_cap)
{
    uint8_t raw[RAW_MAX];
    size_t n;

    if (len > PB_LINK_PAYLOAD_MAX || out_cap < 2)
        return 0;
    raw[0] = type;
    if (len > 0)
        memcpy(raw + 1, payload, len);
    pb_put_u16(raw + 1 + len, pb_crc16(raw, 1 + len));
    n = pb_cobs_encode(raw, len + 3u, out, out_cap - 1u);
    if (n == 0 || n > PB_LINK_ENCODED_MAX)
        return 0;
    out[n] = 0x00;
    return n + 1;
}
