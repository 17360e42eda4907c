/* The revocation list (docs/protocol.md, steps 6 and 8a): key_id -> until.
 * An entry is live while until + skew is at or after box_time. */
#include "lists.h"
#include "bytes.h"

static bool live(const pb_revocation *e, uint32_t now, uint32_t skew)
{
    return (uint64_t)e->until + skew >= now;
}

bool pb_is_revoked(const pb_box_state *state, uint32_t key_id, uint32_t now, uint32_t skew)
{
    unsigned i;
    for (i = 0; i < state->revocation_count; i++)
        if (state->revocations[i].key_id == key_id)
            return live(&state->revocations[i], now, skew);
    return false;
}

static bool listed_live(const pb_box_state *state, uint32_t key_id, uint32_t now, uint32_t skew)
{
    return pb_is_revoked(state, key_id, now, skew);
}

static bool earlier_in_body(const pb_revoke_body *body, unsigned i, uint32_t key_id)
{
    unsigned j;
    for (j = 0; j < i; j++)
        if (pb_get_u32(body->entries + PB_REVOKE_ENTRY_LEN * j) == key_id)
            return true;
    return false;
}

bool pb_revoke_fits(const pb_box_state *state, const pb_revoke_body *body, uint32_t now,
                    uint32_t skew, uint16_t capacity)
{
    unsigned i, needed = 0;
    for (i = 0; i < state->revocation_count; i++)
        if (live(&state->revocations[i], now, skew))
            needed++;
    for (i = 0; i < body->count; i++) {
        uint32_t key_id = pb_get_u32(body->entries + PB_REVOKE_ENTRY_LEN * i);
        if (!listed_live(state, key_id, now, skew) && !earlier_in_body(body, i, key_id))
            needed++;
    }
    return needed <= capacity;
}

void pb_revoke_apply(pb_box_state *state, const pb_revoke_body *body, uint32_t now, uint32_t skew)
{
    unsigned i, j, kept = 0;
    for (i = 0; i < state->revocation_count; i++)
        if (live(&state->revocations[i], now, skew))
            state->revocations[kept++] = state->revocations[i];
    for (i = 0; i < body->count; i++) {
        const uint8_t *entry = body->entries + PB_REVOKE_ENTRY_LEN * i;
        uint32_t key_id = pb_get_u32(entry);
        uint32_t until = pb_get_u32(entry + 4);
        for (j = 0; j < kept; j++)
            if (state->revocations[j].key_id == key_id)
                break;
        if (j == kept) {
            /* pb_revoke_fits counted the room for it. */
            state->revocations[kept].key_id = key_id;
            state->revocations[kept].until = until;
            kept++;
        } else if (state->revocations[j].until < until) {
            state->revocations[j].until = until;
        }
    }
    state->revocation_count = (uint16_t)kept;
}
