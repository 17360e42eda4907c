/* The serial link decoder, fed one byte at a time (docs/protocol.md, Serial
 * link framing and Sizes). A frame with bad COBS or a bad CRC is dropped and
 * counted, never passed on; more than 229 bytes without a delimiter are
 * dropped as bad framing, counted once, up to the next 0x00. */
#include "parkbox.h"
#include "bytes.h"

/* A decoded frame holds at least its type and CRC. */
#define RAW_MIN 3

void pb_frame_decoder_init(pb_frame_decoder *d)
{
    d->len = 0;
    d->discarding = false;
    d->counters.frames = 0;
    d->counters.bad_crc = 0;
    d->counters.bad_cobs = 0;
    d->counters.oversize = 0;
    d->counters.unknown_type = 0;
}

static bool known_type(uint8_t type)
{
    return type == PB_LINK_COMMAND || type == PB_LINK_STATUS_REQUEST ||
           type == PB_LINK_RESPONSE || type == PB_LINK_STATUS_REPORT;
}

/* The delimiter arrived: decode the bytes held, in place. */
static bool end_of_frame(pb_frame_decoder *d, uint8_t *type, const uint8_t **payload,
                         size_t *len)
{
    int raw_len;
    size_t crc_at;
    uint16_t held = d->len;
    bool was_discarding = d->discarding;

    d->len = 0;
    d->discarding = false;
    if (was_discarding || held == 0)
        return false;
    raw_len = pb_cobs_decode(d->buf, held, d->buf, sizeof d->buf);
    if (raw_len < 0) {
        d->counters.bad_cobs++;
        return false;
    }
    if (raw_len < RAW_MIN) {
        d->counters.bad_crc++;
        return false;
    }
    crc_at = (size_t)raw_len - 2u;
    if (pb_crc16(d->buf, crc_at) != pb_get_u16(d->buf + crc_at)) {
        d->counters.bad_crc++;
        return false;
    }
    if (!known_type(d->buf[0])) {
        d->counters.unknown_type++;
        return false;
    }
    d->counters.frames++;
    *type = d->buf[0];
    *payload = d->buf + 1;
    *len = crc_at - 1u;
    return true;
}

bool pb_frame_decoder_push(pb_frame_decoder *d, uint8_t byte, uint8_t *type,
                           const uint8_t **payload, size_t *len)
{
    if (byte == 0x00)
        return end_of_frame(d, type, payload, len);
    if (d->discarding)
        return false;
    if (d->len >= sizeof d->buf) {
        d->counters.oversize++;
        d->discarding = true;
        d->len = 0;
        return false;
    }
    d->buf[d->len++] = byte;
    return false;
}
