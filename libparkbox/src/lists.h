/* The box's two lists: the revocation list (steps 6 and 8a) and the tries
 * counted per key_id (step 9). Times are compared in 64 bits, so until +
 * skew and not_before - skew never wrap. */
#ifndef PB_LISTS_H
#define PB_LISTS_H

#include "parkbox.h"
#include "command.h"

/* Step 8a: key_id is listed and its until + skew is at or after now. */
bool pb_is_revoked(const pb_box_state *state, uint32_t key_id, uint32_t now, uint32_t skew);
/* Step 6, REVOKE: whether the live entries and the new ones fit in capacity
 * (an id already live, or listed twice, needs no more room). Reads only. */
bool pb_revoke_fits(const pb_box_state *state, const pb_revoke_body *body, uint32_t now,
                    uint32_t skew, uint16_t capacity);
/* Step 6, REVOKE, once pb_revoke_fits said so: forgets the entries whose
 * until + skew is before now, then adds the new ones, an id already listed
 * keeping the later until. */
void pb_revoke_apply(pb_box_state *state, const pb_revoke_body *body, uint32_t now, uint32_t skew);

/* The slot counting key_id's tries, or -1. */
int pb_tries_find(const pb_box_state *state, uint32_t key_id);
/* A slot for a key not counted yet: a free one, else one whose not_after +
 * skew has passed (docs/protocol.md: a box may forget those tries), else -1. */
int pb_tries_free_slot(const pb_box_state *state, uint32_t now, uint32_t skew);

#endif
