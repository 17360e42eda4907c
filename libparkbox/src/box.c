/* The box: decide, save the new state, and only then answer (README.md, The
 * persistence rule). A response or a barrier movement never comes before the
 * state that accounts for it is durable. */
#include "parkbox.h"

#include <string.h>

static bool config_ok(const pb_box_config *c)
{
    return (c->direction == PB_DIRECTION_ENTRANCE || c->direction == PB_DIRECTION_EXIT) &&
           c->revocation_capacity >= 1 && c->revocation_capacity <= PB_REVOCATION_CAPACITY;
}

int pb_box_start(pb_box *box, const pb_box_config *config, const pb_crypto_port *crypto,
                 const pb_store_port *store, const uint8_t *issuer_key,
                 const uint8_t *issuer_key_previous)
{
    int r;
    if (!config_ok(config))
        return PB_ERR_ARGUMENT;
    box->config = *config;
    box->crypto = crypto;
    box->store = store;
    box->failed = true;
    box->cursor.generation = 0;
    box->cursor.slot = 0;
    pb_state_init(&box->state, NULL, NULL);
    r = pb_state_load(store, &box->cursor, &box->state);
    if (r == 1) {
        /* A new box: the provisioning file's issuer keys, until a SET_ISSUER. */
        pb_state_init(&box->state, issuer_key, issuer_key_previous);
        r = pb_state_save(store, &box->cursor, &box->state);
    }
    if (r != PB_OK)
        return PB_ERR_STORE;
    box->failed = false;
    return PB_OK;
}

/* After a failed save: the state in RAM may be ahead of the store; take the
 * store's back, or stop answering. */
static void reload(pb_box *box)
{
    if (pb_state_load(box->store, &box->cursor, &box->state) != PB_OK)
        box->failed = true;
}

int pb_box_command(pb_box *box, const pb_conditions *conditions, const uint8_t *command,
                   size_t len, pb_decision *decision, uint8_t response[PB_RESPONSE_LEN])
{
    uint8_t sealed[PB_RESPONSE_LEN];
    pb_decision d;
    int r;

    if (box->failed)
        return PB_ERR_STORE;
    r = pb_decide(&box->config, box->crypto, &box->state, conditions, command, len, &d, sealed);
    if (r != PB_OK)
        return r;
    if (pb_state_save(box->store, &box->cursor, &box->state) != PB_OK) {
        reload(box);
        return PB_ERR_STORE;
    }
    *decision = d;
    memcpy(response, sealed, PB_RESPONSE_LEN);
    return PB_OK;
}

int pb_box_status_report(pb_box *box, const pb_conditions *conditions,
                         uint8_t response[PB_RESPONSE_LEN])
{
    uint8_t sealed[PB_RESPONSE_LEN];
    int r;
    if (box->failed)
        return PB_ERR_STORE;
    r = pb_status_report(&box->config, box->crypto, &box->state, conditions, sealed);
    if (r != PB_OK)
        return r;
    if (pb_state_save(box->store, &box->cursor, &box->state) != PB_OK) {
        reload(box);
        return PB_ERR_STORE;
    }
    memcpy(response, sealed, PB_RESPONSE_LEN);
    return PB_OK;
}
