/* The box's decision (docs/protocol.md, Response frame: steps 1 to 11 with
 * 8a). The outcome is worked out first without touching the state, the
 * response is sealed, and only then are the changes written to the state:
 * a crypto failure leaves the state as it was. */
#include "parkbox.h"
#include "bytes.h"
#include "command.h"
#include "lists.h"

#include <string.h>

/* The body of a sealed frame, decrypted: at most a whole command less its
 * header and tag. */
#define BODY_MAX (PB_COMMAND_MAX - PB_SEALED_FIXED_LEN)

/* What a check decided, and the changes to make once the response is sealed. */
typedef struct outcome {
    pb_response_fields fields;
    uint8_t effect;
    /* Changes (each applied only when set). */
    bool set_control_seq;
    bool set_issuers;
    const uint8_t *issuers;          /* SET_ISSUER body: 128 bytes */
    bool apply_revoke;
    pb_revoke_body revoke;
    int tries_slot;                  /* -1: no try counted */
    uint32_t tries_not_after;
} outcome;

static uint32_t skew_of(const pb_box_config *config)
{
    return config->skew_seconds;
}

/* Step 4: the body in `plain` when the frame authenticates (ACCESS under K_park
 * then K_park next; control kinds under K_box), with its length in *body_len.
 * Returns 1 when it does not, PB_OK, or PB_ERR_CRYPTO. */
static int open_sealed(const pb_box_config *config, const pb_crypto_port *crypto,
                       const uint8_t *frame, size_t len, uint8_t kind,
                       uint8_t plain[BODY_MAX], size_t *body_len)
{
    size_t n = len - PB_SEALED_FIXED_LEN;
    const uint8_t *keys[2];
    unsigned count = 0, i;

    if (n > BODY_MAX)
        return 1; /* longer than any frame of the protocol: it cannot verify */
    if (pb_is_control_kind(kind)) {
        keys[count++] = config->box_key;
    } else {
        if (config->has_parking_key)
            keys[count++] = config->parking_key;
        if (config->has_parking_key_next)
            keys[count++] = config->parking_key_next;
    }
    for (i = 0; i < count; i++) {
        int r = pb_ccm_open(crypto, keys[i], frame + PB_CMD_NONCE, frame, PB_HEADER_LEN,
                            frame + PB_CMD_BODY, n, plain, frame + PB_CMD_BODY + n);
        if (r != 1) {
            *body_len = n;
            return r;
        }
    }
    return 1;
}

/* Step 4, ACCESS_SIGNED: the last 64 bytes sign the bytes before them under
 * issuer_key or issuer_key_previous. Returns PB_OK, 1, or PB_ERR_CRYPTO. */
static int verify_signed(const pb_crypto_port *crypto, const pb_box_state *state,
                         const uint8_t *frame, size_t len)
{
    uint8_t digest[32];
    size_t signed_len = len - PB_SIGNATURE_LEN;

    if (!state->has_issuer_key && !state->has_issuer_key_previous)
        return 1;
    if (!crypto->sha256(crypto->ctx, frame, signed_len, digest))
        return PB_ERR_CRYPTO;
    if (state->has_issuer_key &&
        crypto->p256_verify(crypto->ctx, state->issuer_key, digest, frame + signed_len))
        return PB_OK;
    if (state->has_issuer_key_previous &&
        crypto->p256_verify(crypto->ctx, state->issuer_key_previous, digest, frame + signed_len))
        return PB_OK;
    return 1;
}

/* Step 6: the control sequence, then the command is done (battery and
 * barrier do not refuse a control command). */
static void decide_control(const pb_box_config *config, const pb_box_state *state,
                           const pb_conditions *conditions, uint8_t kind,
                           const uint8_t *body, size_t body_len, outcome *o)
{
    if (o->fields.key_id <= state->last_control_seq) {
        o->fields.status = PB_STATUS_REPLAY;
        return;
    }
    /* "from here the sequence counts as accepted, whatever follows". */
    o->set_control_seq = true;
    switch (kind) {
    case PB_KIND_TIME_SET:
        /* The clock is set first: the response carries the new time. */
        o->fields.box_time = pb_get_u32(body);
        o->effect = PB_EFFECT_SET_TIME;
        break;
    case PB_KIND_SET_ISSUER:
        o->set_issuers = true;
        o->issuers = body;
        break;
    case PB_KIND_REVOKE:
        (void)pb_parse_revoke_body(body, body_len, &o->revoke);
        if (pb_revoke_fits(state, &o->revoke, conditions->box_time, skew_of(config),
                           config->revocation_capacity))
            o->apply_revoke = true;
        else
            o->fields.status = PB_STATUS_REVOCATION_FULL; /* the list as it was */
        break;
    default: /* BATTERY_QUERY: nothing more to do. */
        break;
    }
}

/* Steps 7 to 11 (with 8a) of an access kind whose tag or signature and body
 * passed. */
static void decide_access(const pb_box_config *config, const pb_box_state *state,
                          const pb_conditions *conditions, const pb_access_body *body,
                          outcome *o)
{
    uint8_t max = config->direction == PB_DIRECTION_ENTRANCE ? body->max_entries : body->max_exits;
    int slot = pb_tries_find(state, o->fields.key_id);
    uint8_t counted = slot < 0 ? 0 : state->tries[slot].count;
    uint32_t skew = skew_of(config);
    uint32_t now = conditions->box_time;

    /* Until step 9 counts this try, `remaining` shows the count unchanged. */
    o->fields.remaining = (uint8_t)(max > counted ? max - counted : 0);
    /* Step 7: the validity window, with skew. */
    if ((int64_t)now < (int64_t)body->not_before - (int64_t)skew) {
        o->fields.status = PB_STATUS_NOT_YET_VALID;
        return;
    }
    if ((uint64_t)now > (uint64_t)body->not_after + skew) {
        o->fields.status = PB_STATUS_EXPIRED;
        return;
    }
    /* Step 8: this box is in the module list. */
    if (!pb_access_lists_module(body, config->module_id)) {
        o->fields.status = PB_STATUS_WRONG_MODULE;
        return;
    }
    /* Step 8a: a live revocation refuses, and spends no try. */
    if (pb_is_revoked(state, o->fields.key_id, now, skew)) {
        o->fields.status = PB_STATUS_REVOKED;
        return;
    }
    /* Step 9: tries in this box's direction. A key the table has no room for
     * is refused the same way: that never opens more than it should. */
    if (slot < 0 && max > 0)
        slot = pb_tries_free_slot(state, now, skew);
    if (counted >= max || slot < 0) {
        o->fields.status = PB_STATUS_NO_TRIES_LEFT;
        o->fields.remaining = 0;
        return;
    }
    /* A try that passed 1 to 8a counts, whatever follows. */
    o->tries_slot = slot;
    o->tries_not_after = counted > 0 && state->tries[slot].not_after > body->not_after
                             ? state->tries[slot].not_after
                             : body->not_after;
    o->fields.remaining = (uint8_t)(max - counted - 1u);
    /* Step 10: battery. */
    if (conditions->battery_mv < config->min_battery_mv) {
        o->fields.status = PB_STATUS_LOW_BATTERY;
        return;
    }
    /* Step 11: the barrier moves, else BARRIER_FAULT. */
    if (conditions->jammed) {
        o->fields.status = PB_STATUS_BARRIER_FAULT;
        o->fields.barrier = PB_BARRIER_FAULT;
        o->effect = PB_EFFECT_FAULT;
        return;
    }
    o->fields.status = PB_STATUS_OK;
    o->fields.barrier = conditions->barrier == PB_BARRIER_OPEN ? PB_BARRIER_OPEN : PB_BARRIER_OPENING;
    o->effect = PB_EFFECT_OPEN;
}

/* Steps 3 to 11 once the header parsed. Returns PB_OK or PB_ERR_CRYPTO. */
static int check(const pb_box_config *config, const pb_crypto_port *crypto,
                 const pb_box_state *state, const pb_conditions *conditions,
                 const uint8_t *frame, size_t len, const pb_header *h,
                 uint8_t plain[BODY_MAX], outcome *o)
{
    const uint8_t *body;
    size_t body_len = 0;
    bool access = pb_is_access_kind(h->kind);
    pb_access_body access_body;
    int r;

    /* Step 3: scope, before any cryptography (a refusal here costs none). */
    if (access ? h->scope != config->parking_id : h->scope != config->module_id) {
        o->fields.status = access ? PB_STATUS_WRONG_PARKING : PB_STATUS_WRONG_MODULE;
        return PB_OK;
    }
    /* Step 4: the tag, or for ACCESS_SIGNED the signature. */
    if (h->kind == PB_KIND_ACCESS_SIGNED) {
        r = verify_signed(crypto, state, frame, len);
        body = frame + PB_CMD_BODY;
        body_len = len - PB_SIGNED_FIXED_LEN;
    } else {
        r = open_sealed(config, crypto, frame, len, h->kind, plain, &body_len);
        body = plain;
    }
    if (r < 0)
        return r;
    if (r == 1) {
        o->fields.status = PB_STATUS_AUTH_FAILED;
        return PB_OK;
    }
    /* Step 5: the body's length (and SET_ISSUER's points). */
    switch (h->kind) {
    case PB_KIND_ACCESS:
    case PB_KIND_ACCESS_SIGNED:
        r = pb_parse_access_body(body, body_len, &access_body);
        break;
    case PB_KIND_BATTERY_QUERY:
        r = body_len == 0;
        break;
    case PB_KIND_TIME_SET:
        r = body_len == PB_TIME_SET_BODY_LEN;
        break;
    case PB_KIND_REVOKE:
        r = pb_parse_revoke_body(body, body_len, &o->revoke);
        break;
    default: /* SET_ISSUER */
        r = pb_check_set_issuer_body(crypto, body, body_len);
        break;
    }
    if (!r) {
        o->fields.status = PB_STATUS_MALFORMED;
        return PB_OK;
    }
    if (access)
        decide_access(config, state, conditions, &access_body, o);
    else
        decide_control(config, state, conditions, h->kind, body, body_len, o);
    return PB_OK;
}

/* Writes the outcome's changes into the state, the response being sealed. */
static void apply(const pb_box_config *config, pb_box_state *state,
                  const pb_conditions *conditions, const outcome *o)
{
    state->box_seq = o->fields.box_seq;
    if (o->set_control_seq)
        state->last_control_seq = o->fields.key_id;
    if (o->set_issuers) {
        /* "SET_ISSUER replaces both issuer keys", at once. */
        const uint8_t *previous = o->issuers + PB_PUBLIC_KEY_LEN;
        memcpy(state->issuer_key, o->issuers, PB_PUBLIC_KEY_LEN);
        state->has_issuer_key = true;
        state->has_issuer_key_previous = !pb_is_zero(previous, PB_PUBLIC_KEY_LEN);
        if (state->has_issuer_key_previous)
            memcpy(state->issuer_key_previous, previous, PB_PUBLIC_KEY_LEN);
        else
            memset(state->issuer_key_previous, 0, PB_PUBLIC_KEY_LEN);
    }
    if (o->apply_revoke)
        pb_revoke_apply(state, &o->revoke, conditions->box_time, config->skew_seconds);
    if (o->tries_slot >= 0) {
        pb_tries *t = &state->tries[o->tries_slot];
        if (t->count == 0 || t->key_id != o->fields.key_id)
            t->count = 0; /* a free or forgotten slot starts afresh */
        t->key_id = o->fields.key_id;
        t->not_after = o->tries_not_after;
        t->count++;
    }
}

static void start_fields(const pb_box_config *config, const pb_box_state *state,
                         const pb_conditions *conditions, pb_response_fields *f)
{
    f->status = PB_STATUS_OK;
    f->kind = PB_KIND_NONE;
    f->module_id = config->module_id;
    f->key_id = 0;
    f->box_seq = state->box_seq + 1u;
    f->box_time = conditions->box_time;
    f->battery_mv = conditions->battery_mv;
    f->barrier = conditions->barrier;
    f->direction = config->direction;
    f->remaining = PB_REMAINING_NOT_APPLICABLE;
}

int pb_decide(const pb_box_config *config, const pb_crypto_port *crypto,
              pb_box_state *state, const pb_conditions *conditions,
              const uint8_t *command, size_t len, pb_decision *decision,
              uint8_t response[PB_RESPONSE_LEN])
{
    uint8_t plain[BODY_MAX];
    outcome o;
    pb_header h;
    uint8_t parsed;
    int r;

    /* docs/protocol.md, Response frame, offset 11: box_seq strictly increases. */
    if (state->box_seq == UINT32_MAX)
        return PB_ERR_EXHAUSTED;
    memset(&o, 0, sizeof o);
    o.tries_slot = -1;
    o.effect = PB_EFFECT_NONE;
    start_fields(config, state, conditions, &o.fields);

    /* Steps 1 and 2; when they fail, kind and key_id answer 0. */
    parsed = pb_parse_header(command, len, &h);
    if (parsed != PB_STATUS_OK) {
        o.fields.status = parsed;
    } else {
        o.fields.kind = h.kind;
        o.fields.key_id = h.key_id;
        /* Offset 22: 0 for a control kind, else the box's own direction. */
        if (pb_is_control_kind(h.kind))
            o.fields.direction = PB_DIRECTION_CONTROL;
        r = check(config, crypto, state, conditions, command, len, &h, plain, &o);
        if (r != PB_OK)
            return r;
    }
    r = pb_response_seal(crypto, config->box_key, &o.fields, command, len, response);
    if (r != PB_OK)
        return r;
    apply(config, state, conditions, &o);
    decision->status = o.fields.status;
    decision->kind = o.fields.kind;
    decision->key_id = o.fields.key_id;
    decision->remaining = o.fields.remaining;
    decision->effect = o.effect;
    decision->time = o.fields.box_time;
    return PB_OK;
}

int pb_status_report(const pb_box_config *config, const pb_crypto_port *crypto,
                     pb_box_state *state, const pb_conditions *conditions,
                     uint8_t response[PB_RESPONSE_LEN])
{
    pb_response_fields f;
    int r;
    if (state->box_seq == UINT32_MAX)
        return PB_ERR_EXHAUSTED;
    start_fields(config, state, conditions, &f);
    r = pb_response_seal(crypto, config->box_key, &f, NULL, 0, response);
    if (r == PB_OK)
        state->box_seq = f.box_seq;
    return r;
}

void pb_state_init(pb_box_state *state, const uint8_t *issuer_key,
                   const uint8_t *issuer_key_previous)
{
    memset(state, 0, sizeof *state);
    if (issuer_key != NULL) {
        state->has_issuer_key = true;
        memcpy(state->issuer_key, issuer_key, PB_PUBLIC_KEY_LEN);
    }
    if (issuer_key_previous != NULL) {
        state->has_issuer_key_previous = true;
        memcpy(state->issuer_key_previous, issuer_key_previous, PB_PUBLIC_KEY_LEN);
    }
}
