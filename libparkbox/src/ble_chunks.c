/* BLE chunks (docs/protocol.md, BLE link): each chunk is a header byte (bit 7
 * on the last chunk, bits 0..6 a counter from 0) || up to MTU - 4 bytes of
 * the frame, every chunk but the last full. The counter never wraps (a frame
 * takes at most 128 chunks), so counter 0 always starts a frame. */
#include "parkbox.h"

#include <string.h>

#define COUNTER_MASK 0x7Fu
/* ATT overhead (3 bytes) and the chunk header (1 byte). */
#define CHUNK_OVERHEAD 4u
#define MAX_CHUNKS 128u

void pb_ble_reassembler_init(pb_ble_reassembler *r)
{
    r->len = 0;
    r->expected = 0;
    r->waiting_for_start = false;
    r->counters.frames = 0;
    r->counters.counter_errors = 0;
    r->counters.oversize = 0;
    r->counters.empty_chunks = 0;
}

static void clear(pb_ble_reassembler *r)
{
    r->len = 0;
    r->expected = 0;
    r->waiting_for_start = false;
}

bool pb_ble_push(pb_ble_reassembler *r, const uint8_t *chunk, size_t chunk_len,
                 const uint8_t **frame, size_t *len)
{
    uint8_t counter;
    size_t body;

    if (chunk_len == 0) {
        r->counters.empty_chunks++;
        return false;
    }
    counter = (uint8_t)(chunk[0] & COUNTER_MASK);
    if (counter == 0) {
        if (r->len > 0)
            r->counters.counter_errors++; /* a new frame cut the last one short */
        clear(r);
    } else if (r->waiting_for_start) {
        return false;
    } else if (counter != r->expected) {
        r->counters.counter_errors++;
        clear(r);
        r->waiting_for_start = true;
        return false;
    }
    body = chunk_len - 1u;
    if ((size_t)r->len + body > sizeof r->buf) {
        r->counters.oversize++;
        clear(r);
        r->waiting_for_start = true;
        return false;
    }
    memcpy(r->buf + r->len, chunk + 1, body);
    r->len = (uint16_t)(r->len + body);
    r->expected = (uint8_t)(counter + 1u);
    if ((chunk[0] & PB_BLE_LAST_CHUNK) == 0)
        return false;
    r->counters.frames++;
    *frame = r->buf;
    *len = r->len;
    r->len = 0;
    r->expected = 0;
    return true;
}

unsigned pb_ble_chunk_count(size_t len, uint16_t mtu)
{
    size_t room;
    if (mtu < PB_BLE_MIN_MTU)
        return 0;
    room = (size_t)mtu - CHUNK_OVERHEAD;
    return len == 0 ? 1u : (unsigned)((len + room - 1u) / room);
}

size_t pb_ble_chunk(const uint8_t *frame, size_t len, uint16_t mtu, unsigned index,
                    uint8_t *out)
{
    unsigned count = pb_ble_chunk_count(len, mtu);
    size_t room, start, end;

    if (count == 0 || count > MAX_CHUNKS || index >= count)
        return 0;
    room = (size_t)mtu - CHUNK_OVERHEAD;
    start = (size_t)index * room;
    end = start + room < len ? start + room : len;
    out[0] = (uint8_t)(index | (index + 1u == count ? PB_BLE_LAST_CHUNK : 0u));
    if (end > start)
        memcpy(out + 1, frame + start, end - start);
    return 1u + (end - start);
}
