/* The persisted state (README.md, The persistence rule): two slots, each an
 * 8-byte commit header and the state image.
 *
 *   header: generation u32 || CRC-16 u16 over generation || image || magic u16
 *   image:  box_seq u32 || last_control_seq u32 || issuer flags u8 ||
 *           issuer_key (64) || issuer_key_previous (64) ||
 *           revocation_count u16 || (key_id u32 || until u32) x capacity ||
 *           (key_id u32 || not_after u32 || count u8) x tries capacity
 *
 * A save goes to the slot that does not hold the current image: erase, the
 * image, then the header. Until the header is whole, that slot fails its
 * magic or its CRC, and a load takes the other slot: the state before the
 * save, under which the box has sent nothing and opened nothing. A load
 * takes the valid slot of the higher generation. No RAM copy of the image is
 * made: it is written and read through a 32-byte window. */
#include "parkbox.h"
#include "bytes.h"

#include <string.h>

#define MAGIC 0x5042u /* "PB" */
#define HDR_GENERATION 0
#define HDR_CRC 4
#define HDR_MAGIC 6
#define WINDOW 32u

#define FLAG_ISSUER 0x01u
#define FLAG_ISSUER_PREVIOUS 0x02u

/* Offsets inside the image (after the header). */
enum {
    IMG_BOX_SEQ = 0,
    IMG_CONTROL_SEQ = 4,
    IMG_FLAGS = 8,
    IMG_ISSUER = 9,
    IMG_ISSUER_PREVIOUS = IMG_ISSUER + PB_PUBLIC_KEY_LEN,
    IMG_REVOCATION_COUNT = IMG_ISSUER_PREVIOUS + PB_PUBLIC_KEY_LEN,
    IMG_REVOCATIONS = IMG_REVOCATION_COUNT + 2,
    IMG_TRIES = IMG_REVOCATIONS + 8 * PB_REVOCATION_CAPACITY,
    IMG_END = IMG_TRIES + 9 * PB_TRIES_CAPACITY
};

typedef char image_len_matches[(IMG_END == PB_STATE_BODY_LEN) ? 1 : -1];

/* A sequential writer into one slot through a small window. */
typedef struct writer {
    const pb_store_port *store;
    unsigned slot;
    size_t offset;      /* where the window goes in the slot */
    uint8_t window[WINDOW];
    unsigned fill;
    uint16_t crc;
    bool ok;
} writer;

static void flush(writer *w)
{
    if (w->fill == 0)
        return;
    if (w->ok && !w->store->write(w->store->ctx, w->slot, w->offset, w->window, w->fill))
        w->ok = false;
    w->offset += w->fill;
    w->fill = 0;
}

static void put(writer *w, const uint8_t *data, size_t len)
{
    size_t i;
    w->crc = pb_crc16_update(w->crc, data, len);
    for (i = 0; i < len; i++) {
        w->window[w->fill++] = data[i];
        if (w->fill == WINDOW)
            flush(w);
    }
}

static void put_u32(writer *w, uint32_t v)
{
    uint8_t b[4];
    pb_put_u32(b, v);
    put(w, b, 4);
}

int pb_state_save(const pb_store_port *store, pb_store_cursor *cursor, const pb_box_state *state)
{
    writer w;
    uint8_t header[PB_STATE_HEADER_LEN];
    uint8_t b[2];
    uint32_t generation = cursor->generation + 1u;
    unsigned slot = cursor->generation == 0 ? 0u : 1u - cursor->slot;
    unsigned i;

    w.store = store;
    w.slot = slot;
    w.offset = PB_STATE_HEADER_LEN;
    w.fill = 0;
    w.ok = store->erase(store->ctx, slot);
    pb_put_u32(header + HDR_GENERATION, generation);
    w.crc = pb_crc16(header + HDR_GENERATION, 4);

    put_u32(&w, state->box_seq);
    put_u32(&w, state->last_control_seq);
    b[0] = (uint8_t)((state->has_issuer_key ? FLAG_ISSUER : 0u) |
                     (state->has_issuer_key_previous ? FLAG_ISSUER_PREVIOUS : 0u));
    put(&w, b, 1);
    put(&w, state->issuer_key, PB_PUBLIC_KEY_LEN);
    put(&w, state->issuer_key_previous, PB_PUBLIC_KEY_LEN);
    pb_put_u16(b, state->revocation_count);
    put(&w, b, 2);
    for (i = 0; i < PB_REVOCATION_CAPACITY; i++) {
        put_u32(&w, state->revocations[i].key_id);
        put_u32(&w, state->revocations[i].until);
    }
    for (i = 0; i < PB_TRIES_CAPACITY; i++) {
        put_u32(&w, state->tries[i].key_id);
        put_u32(&w, state->tries[i].not_after);
        put(&w, &state->tries[i].count, 1);
    }
    flush(&w);
    if (!w.ok)
        return PB_ERR_STORE;
    /* The commit: the header, written last. */
    pb_put_u16(header + HDR_CRC, w.crc);
    pb_put_u16(header + HDR_MAGIC, MAGIC);
    if (!store->write(store->ctx, slot, 0, header, sizeof header))
        return PB_ERR_STORE;
    cursor->generation = generation;
    cursor->slot = (uint8_t)slot;
    return PB_OK;
}

/* The slot's generation when it holds a whole image, else 0. */
static int slot_generation(const pb_store_port *store, unsigned slot, uint32_t *generation)
{
    uint8_t header[PB_STATE_HEADER_LEN];
    uint8_t window[WINDOW];
    uint16_t crc;
    size_t at;

    *generation = 0;
    if (!store->read(store->ctx, slot, 0, header, sizeof header))
        return PB_ERR_STORE;
    if (pb_get_u16(header + HDR_MAGIC) != MAGIC)
        return PB_OK;
    crc = pb_crc16(header + HDR_GENERATION, 4);
    for (at = 0; at < PB_STATE_BODY_LEN; at += WINDOW) {
        size_t n = PB_STATE_BODY_LEN - at < WINDOW ? PB_STATE_BODY_LEN - at : WINDOW;
        if (!store->read(store->ctx, slot, PB_STATE_HEADER_LEN + at, window, n))
            return PB_ERR_STORE;
        crc = pb_crc16_update(crc, window, n);
    }
    if (crc == pb_get_u16(header + HDR_CRC))
        *generation = pb_get_u32(header + HDR_GENERATION);
    return PB_OK;
}

static bool get(const pb_store_port *store, unsigned slot, size_t offset, uint8_t *out, size_t len)
{
    return store->read(store->ctx, slot, PB_STATE_HEADER_LEN + offset, out, len);
}

static bool get_u32(const pb_store_port *store, unsigned slot, size_t offset, uint32_t *v)
{
    uint8_t b[4];
    if (!get(store, slot, offset, b, 4))
        return false;
    *v = pb_get_u32(b);
    return true;
}

static int read_image(const pb_store_port *store, unsigned slot, pb_box_state *state)
{
    uint8_t b[2];
    unsigned i;
    bool ok = get_u32(store, slot, IMG_BOX_SEQ, &state->box_seq) &&
              get_u32(store, slot, IMG_CONTROL_SEQ, &state->last_control_seq) &&
              get(store, slot, IMG_FLAGS, b, 1) &&
              get(store, slot, IMG_ISSUER, state->issuer_key, PB_PUBLIC_KEY_LEN) &&
              get(store, slot, IMG_ISSUER_PREVIOUS, state->issuer_key_previous, PB_PUBLIC_KEY_LEN);
    if (!ok)
        return PB_ERR_STORE;
    state->has_issuer_key = (b[0] & FLAG_ISSUER) != 0;
    state->has_issuer_key_previous = (b[0] & FLAG_ISSUER_PREVIOUS) != 0;
    if (!get(store, slot, IMG_REVOCATION_COUNT, b, 2))
        return PB_ERR_STORE;
    state->revocation_count = pb_get_u16(b);
    if (state->revocation_count > PB_REVOCATION_CAPACITY)
        state->revocation_count = PB_REVOCATION_CAPACITY;
    for (i = 0; i < PB_REVOCATION_CAPACITY; i++) {
        if (!get_u32(store, slot, IMG_REVOCATIONS + 8u * i, &state->revocations[i].key_id) ||
            !get_u32(store, slot, IMG_REVOCATIONS + 8u * i + 4u, &state->revocations[i].until))
            return PB_ERR_STORE;
    }
    for (i = 0; i < PB_TRIES_CAPACITY; i++) {
        if (!get_u32(store, slot, IMG_TRIES + 9u * i, &state->tries[i].key_id) ||
            !get_u32(store, slot, IMG_TRIES + 9u * i + 4u, &state->tries[i].not_after) ||
            !get(store, slot, IMG_TRIES + 9u * i + 8u, &state->tries[i].count, 1))
            return PB_ERR_STORE;
    }
    return PB_OK;
}

int pb_state_load(const pb_store_port *store, pb_store_cursor *cursor, pb_box_state *state)
{
    uint32_t g0, g1;
    unsigned slot;
    int r;

    if (slot_generation(store, 0, &g0) != PB_OK || slot_generation(store, 1, &g1) != PB_OK)
        return PB_ERR_STORE;
    if (g0 == 0 && g1 == 0)
        return 1;
    slot = g1 > g0 ? 1u : 0u;
    r = read_image(store, slot, state);
    if (r != PB_OK)
        return r;
    cursor->generation = slot == 1u ? g1 : g0;
    cursor->slot = (uint8_t)slot;
    return PB_OK;
}
