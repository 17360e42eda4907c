/* Tries counted per key_id in this box's direction (docs/protocol.md, step 9),
 * whichever access kind carried the key. A slot with count 0 is free. */
#include "lists.h"

int pb_tries_find(const pb_box_state *state, uint32_t key_id)
{
    unsigned i;
    for (i = 0; i < PB_TRIES_CAPACITY; i++)
        if (state->tries[i].count > 0 && state->tries[i].key_id == key_id)
            return (int)i;
    return -1;
}

int pb_tries_free_slot(const pb_box_state *state, uint32_t now, uint32_t skew)
{
    unsigned i;
    for (i = 0; i < PB_TRIES_CAPACITY; i++)
        if (state->tries[i].count == 0)
            return (int)i;
    /* "A box may forget the tries of a key once its not_after + skew has
     * passed": such a key is EXPIRED at step 7 before its count matters. */
    for (i = 0; i < PB_TRIES_CAPACITY; i++)
        if ((uint64_t)state->tries[i].not_after + skew < now)
            return (int)i;
    return -1;
}
