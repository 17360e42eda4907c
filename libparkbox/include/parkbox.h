/*
 * libparkbox: the box side of the box protocol, version 2 (docs/protocol.md).
 *
 * C99, no dynamic memory, no global mutable state: everything the library
 * keeps lives in structs the caller owns. The core uses no libc beyond
 * string.h, stdint.h and stdbool.h (and stddef.h for size_t). Crypto and
 * persistence go through ports (pb_crypto_port, pb_store_port) so a board
 * can use its own engine and its own flash.
 *
 * The layers, each in its own file:
 *   link:     crc16.c, cobs.c, frame_decoder.c (serial), ble_chunks.c (BLE)
 *   crypto:   ccm.c (AES-128-CCM over the port's block cipher)
 *   frames:   command.c (header and bodies), response.c (the sealed answer)
 *   decision: revocation.c, tries.c, decide.c (steps 1 to 11 with 8a)
 *   state:    state.c (the persisted image, two slots), box.c (the box)
 */
#ifndef PARKBOX_H
#define PARKBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Sizes (docs/protocol.md, Sizes) ---------------------------------- */

#define PB_VERSION 0x01u
#define PB_KEY_LEN 16u
#define PB_NONCE_LEN 12u
#define PB_TAG_LEN 8u
#define PB_PUBLIC_KEY_LEN 64u  /* X || Y, big-endian, no 0x04 prefix */
#define PB_SIGNATURE_LEN 64u   /* r || s, big-endian */
#define PB_HEADER_LEN 22u      /* version .. nonce: the AAD of a sealed command */
#define PB_SEALED_FIXED_LEN 30u  /* header and tag */
#define PB_SIGNED_FIXED_LEN 86u  /* header and signature */
#define PB_COMMAND_MAX 225u    /* ACCESS_SIGNED with 32 modules */
#define PB_RESPONSE_LEN 32u
#define PB_MODULES_MAX 32u
#define PB_REVOKE_ENTRIES_MAX 16u
#define PB_DEFAULT_SKEW_SECONDS 120u
#define PB_REMAINING_NOT_APPLICABLE 0xFFu

/* A link frame: type || payload || CRC (2), COBS-encoded, then 0x00. */
#define PB_LINK_FRAME_MAX 230u          /* delimiter included */
#define PB_LINK_ENCODED_MAX 229u        /* bytes between two delimiters */
#define PB_LINK_PAYLOAD_MAX 225u        /* the longest command frame */

/* Revocation list: at least 64 entries (docs/protocol.md, after step 11). */
#ifndef PB_REVOCATION_CAPACITY
#define PB_REVOCATION_CAPACITY 64u
#endif
/* Keys whose tries the box counts at once. When every slot holds a key still
 * within its window, a new key is refused NO_TRIES_LEFT: refusing is the
 * only answer that never opens more than it should. */
#ifndef PB_TRIES_CAPACITY
#define PB_TRIES_CAPACITY 32u
#endif

/* ---- Codes (docs/protocol.md, Command frame and Status codes) --------- */

enum pb_kind {
    PB_KIND_NONE = 0x00,
    PB_KIND_ACCESS = 0x01,
    PB_KIND_BATTERY_QUERY = 0x02,
    PB_KIND_TIME_SET = 0x03,
    PB_KIND_ACCESS_SIGNED = 0x04,
    PB_KIND_REVOKE = 0x05,
    PB_KIND_SET_ISSUER = 0x06
};

enum pb_status {
    PB_STATUS_OK = 0x00,
    PB_STATUS_NOT_YET_VALID = 0x10,
    PB_STATUS_EXPIRED = 0x11,
    PB_STATUS_NO_TRIES_LEFT = 0x12,
    PB_STATUS_WRONG_MODULE = 0x13,
    PB_STATUS_WRONG_PARKING = 0x14,
    PB_STATUS_REPLAY = 0x15,
    PB_STATUS_REVOKED = 0x16,
    PB_STATUS_AUTH_FAILED = 0x20,
    PB_STATUS_MALFORMED = 0x21,
    PB_STATUS_UNSUPPORTED_VERSION = 0x22,
    PB_STATUS_BARRIER_FAULT = 0x30,
    PB_STATUS_LOW_BATTERY = 0x31,
    PB_STATUS_REVOCATION_FULL = 0x32
};

enum pb_barrier {
    PB_BARRIER_CLOSED = 0,
    PB_BARRIER_OPENING = 1,
    PB_BARRIER_OPEN = 2,
    PB_BARRIER_CLOSING = 3,
    PB_BARRIER_FAULT = 4
};

enum pb_direction {
    PB_DIRECTION_CONTROL = 0,
    PB_DIRECTION_ENTRANCE = 1,
    PB_DIRECTION_EXIT = 2
};

enum pb_link_type {
    PB_LINK_COMMAND = 0x01,
    PB_LINK_STATUS_REQUEST = 0x02,
    PB_LINK_RESPONSE = 0x81,
    PB_LINK_STATUS_REPORT = 0x82
};

/* What a library call returns when it can fail for a reason other than the
 * protocol's own statuses (those travel in the response). */
enum pb_result {
    PB_OK = 0,
    PB_ERR_ARGUMENT = -1,  /* a size or value outside what the call takes */
    PB_ERR_CRYPTO = -2,    /* the crypto port failed */
    PB_ERR_STORE = -3,     /* the store port failed; nothing was answered */
    PB_ERR_EXHAUSTED = -4  /* box_seq cannot go past 0xFFFFFFFF */
};

/* ---- Crypto port ------------------------------------------------------- */

/*
 * What the library asks of a crypto engine. Every function returns true on
 * success. `ctx` is passed back untouched (the engine's own state: a cached
 * curve, a hardware handle). port/mbedtls_port.c implements it on mbed TLS.
 */
typedef struct pb_crypto_port {
    void *ctx;
    /* AES-128 encryption of one 16-byte block (CCM needs no decryption). */
    bool (*aes128_encrypt)(void *ctx, const uint8_t key[PB_KEY_LEN],
                           const uint8_t in[16], uint8_t out[16]);
    /* SHA-256 of len bytes. */
    bool (*sha256)(void *ctx, const uint8_t *data, size_t len, uint8_t digest[32]);
    /* True when `signature` (r || s) is a valid ECDSA P-256 signature of
     * `digest` under `public_key` (X || Y). Any valid s, high or low. */
    bool (*p256_verify)(void *ctx, const uint8_t public_key[PB_PUBLIC_KEY_LEN],
                        const uint8_t digest[32],
                        const uint8_t signature[PB_SIGNATURE_LEN]);
    /* True when X and Y are below p and (X, Y) is on P-256. */
    bool (*p256_point_valid)(void *ctx, const uint8_t public_key[PB_PUBLIC_KEY_LEN]);
    /* Random bytes from a CSPRNG. The protocol gives a box nothing to draw
     * (its response nonce is module_id || box_seq || box_time); the port
     * carries it for the board's own use (a BLE pairing, a wear offset). */
    bool (*random)(void *ctx, uint8_t *out, size_t len);
} pb_crypto_port;

/* ---- Store port -------------------------------------------------------- */

/*
 * Two slots of PB_STATE_IMAGE_LEN bytes each (flash pages, two files, an
 * EEPROM split in halves). state.c writes a new image into the slot that
 * does not hold the current one, its commit header last, so a write cut
 * short leaves the current slot as it was (README.md, The persistence rule).
 * `write` must not return before the bytes are durable, and must report a
 * failure; a board with erase-before-write flash erases in `erase`.
 */
typedef struct pb_store_port {
    void *ctx;
    bool (*read)(void *ctx, unsigned slot, size_t offset, uint8_t *out, size_t len);
    bool (*erase)(void *ctx, unsigned slot);
    bool (*write)(void *ctx, unsigned slot, size_t offset, const uint8_t *data, size_t len);
} pb_store_port;

/* ---- Box configuration, state and conditions --------------------------- */

/* What the provisioning file gives (docs/protocol.md, Provisioning file). */
typedef struct pb_box_config {
    uint32_t module_id;
    uint32_t parking_id;
    uint8_t direction;                 /* PB_DIRECTION_ENTRANCE or _EXIT */
    bool has_parking_key;              /* K_park; a signed parking has none */
    uint8_t parking_key[PB_KEY_LEN];
    bool has_parking_key_next;         /* tried after K_park */
    uint8_t parking_key_next[PB_KEY_LEN];
    uint8_t box_key[PB_KEY_LEN];       /* K_box */
    uint32_t skew_seconds;             /* PB_DEFAULT_SKEW_SECONDS unless set */
    uint16_t min_battery_mv;           /* below it: LOW_BATTERY (step 10) */
    uint16_t revocation_capacity;      /* 1..PB_REVOCATION_CAPACITY */
} pb_box_config;

/* One revocation list entry: 8 bytes, as in flash. */
typedef struct pb_revocation {
    uint32_t key_id;
    uint32_t until;
} pb_revocation;

/* Tries counted for one key_id in this box's direction (step 9), with the
 * latest not_after seen, so the slot can be reused once it has passed. */
typedef struct pb_tries {
    uint32_t key_id;
    uint32_t not_after;
    uint8_t count;                     /* 0: the slot is free */
} pb_tries;

/* What survives a restart (docs/protocol.md, the paragraph after step 11). */
typedef struct pb_box_state {
    uint32_t box_seq;                  /* of the last response sent; 0 before */
    uint32_t last_control_seq;         /* the last control sequence accepted */
    bool has_issuer_key;
    bool has_issuer_key_previous;
    uint8_t issuer_key[PB_PUBLIC_KEY_LEN];
    uint8_t issuer_key_previous[PB_PUBLIC_KEY_LEN];
    uint16_t revocation_count;
    pb_revocation revocations[PB_REVOCATION_CAPACITY];
    pb_tries tries[PB_TRIES_CAPACITY];
} pb_box_state;

/* The box's clock, battery and barrier when a command arrives. */
typedef struct pb_conditions {
    uint32_t box_time;                 /* Unix seconds */
    uint16_t battery_mv;
    uint8_t barrier;                   /* enum pb_barrier */
    bool jammed;                       /* the barrier would not move */
} pb_conditions;

/* What the box must do besides sending the response. */
enum pb_effect {
    PB_EFFECT_NONE = 0,
    PB_EFFECT_OPEN,      /* access accepted: open the barrier */
    PB_EFFECT_FAULT,     /* access accepted, barrier jammed (BARRIER_FAULT) */
    PB_EFFECT_SET_TIME   /* TIME_SET accepted: the clock is now `time` */
};

/* The outcome of one command. */
typedef struct pb_decision {
    uint8_t status;
    uint8_t kind;                      /* echoed; 0 when steps 1-2 failed */
    uint32_t key_id;                   /* echoed; 0 when steps 1-2 failed */
    uint8_t remaining;
    uint8_t effect;                    /* enum pb_effect */
    uint32_t time;                     /* PB_EFFECT_SET_TIME: the new clock */
} pb_decision;

/* ---- Link layer -------------------------------------------------------- */

/* CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no xor. */
uint16_t pb_crc16(const uint8_t *data, size_t len);
uint16_t pb_crc16_update(uint16_t crc, const uint8_t *data, size_t len);

/* COBS. Encode writes at most len + len / 254 + 1 bytes (no delimiter) and
 * returns the count, or 0 when out_cap is too small. Decode returns the
 * decoded length, or -1 on bad COBS (a zero byte, a code running past the
 * end) or when out_cap is too small; in and out may be the same buffer. */
size_t pb_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap);
int pb_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap);

/* One link frame, COBS-encoded with its CRC and trailing 0x00, into out.
 * Returns the length written, 0 if it does not fit or payload is too long. */
size_t pb_link_encode(uint8_t type, const uint8_t *payload, size_t len,
                      uint8_t *out, size_t out_cap);

/* Counters of what the serial decoder dropped (never passed on). */
typedef struct pb_link_counters {
    uint32_t frames;
    uint32_t bad_crc;
    uint32_t bad_cobs;
    uint32_t oversize;       /* more than 229 bytes between delimiters */
    uint32_t unknown_type;   /* CRC right, type not one of the four */
} pb_link_counters;

/* The serial decoder, fed one byte at a time. At most 229 bytes are held;
 * a longer run is counted once and skipped up to the next 0x00. Empty runs
 * (0x00 0x00) are idle line. */
typedef struct pb_frame_decoder {
    uint8_t buf[PB_LINK_ENCODED_MAX];
    uint16_t len;
    bool discarding;
    pb_link_counters counters;
} pb_frame_decoder;

void pb_frame_decoder_init(pb_frame_decoder *d);
/* Returns true when `byte` completes a good frame: then *type, *payload
 * (inside the decoder, valid until the next call) and *len are set. */
bool pb_frame_decoder_push(pb_frame_decoder *d, uint8_t byte, uint8_t *type,
                           const uint8_t **payload, size_t *len);

/* BLE chunks (docs/protocol.md, BLE link): header byte (bit 7 last chunk,
 * bits 0..6 a counter from 0) || up to MTU - 4 bytes. */
#define PB_BLE_MIN_MTU 23u
#define PB_BLE_LAST_CHUNK 0x80u

typedef struct pb_ble_counters {
    uint32_t frames;
    uint32_t counter_errors; /* a chunk out of order: the partial frame dropped */
    uint32_t oversize;       /* longer than PB_COMMAND_MAX: dropped */
    uint32_t empty_chunks;
} pb_ble_counters;

typedef struct pb_ble_reassembler {
    uint8_t buf[PB_COMMAND_MAX];
    uint16_t len;
    uint8_t expected;        /* the next chunk counter */
    bool waiting_for_start;  /* after an error, until a chunk with counter 0 */
    pb_ble_counters counters;
} pb_ble_reassembler;

void pb_ble_reassembler_init(pb_ble_reassembler *r);
/* Returns true when `chunk` completes a frame: *frame (inside r) and *len. */
bool pb_ble_push(pb_ble_reassembler *r, const uint8_t *chunk, size_t chunk_len,
                 const uint8_t **frame, size_t *len);
/* Chunk `index` of `frame` at `mtu` into out (at least mtu - 3 bytes).
 * Returns its length, 0 when index is past the last chunk or mtu < 23. */
size_t pb_ble_chunk(const uint8_t *frame, size_t len, uint16_t mtu, unsigned index,
                    uint8_t *out);
/* How many chunks `len` bytes take at `mtu` (0 if mtu < 23). */
unsigned pb_ble_chunk_count(size_t len, uint16_t mtu);

/* ---- CCM (AES-128, M = 8, 12-byte nonce) ------------------------------ */

/* Encrypts in place and writes the 8-byte tag. */
int pb_ccm_seal(const pb_crypto_port *crypto, const uint8_t key[PB_KEY_LEN],
                const uint8_t nonce[PB_NONCE_LEN], const uint8_t *aad, size_t aad_len,
                uint8_t *data, size_t len, uint8_t tag[PB_TAG_LEN]);
/* Decrypts `in` into `out` and returns PB_OK when `tag` verifies (compared
 * in constant time); otherwise returns 1 and leaves `out` zeroed. */
int pb_ccm_open(const pb_crypto_port *crypto, const uint8_t key[PB_KEY_LEN],
                const uint8_t nonce[PB_NONCE_LEN], const uint8_t *aad, size_t aad_len,
                const uint8_t *in, size_t len, uint8_t *out, const uint8_t tag[PB_TAG_LEN]);
/* Constant-time comparison of n bytes: true when equal. */
bool pb_equal_ct(const uint8_t *a, const uint8_t *b, size_t n);

/* ---- Response frame ---------------------------------------------------- */

typedef struct pb_response_fields {
    uint8_t status;
    uint8_t kind;
    uint32_t module_id;
    uint32_t key_id;
    uint32_t box_seq;
    uint32_t box_time;
    uint16_t battery_mv;
    uint8_t barrier;
    uint8_t direction;
    uint8_t remaining;
} pb_response_fields;

/* Seals a response under K_box, bound to the command it answers
 * (`command`, len bytes, as received; NULL or under 22 bytes for a status
 * report or a short command: 12 zero bytes of AAD). */
int pb_response_seal(const pb_crypto_port *crypto, const uint8_t box_key[PB_KEY_LEN],
                     const pb_response_fields *fields, const uint8_t *command,
                     size_t command_len, uint8_t out[PB_RESPONSE_LEN]);

/* ---- The decision (steps 1 to 11 with 8a) ------------------------------ */

/*
 * Runs the checks on `command` in order, updates `state` in place (tries,
 * last control sequence, issuer keys, revocation list, box_seq + 1) and
 * seals the one response. Never reads outside command[0..len). Returns
 * PB_OK, PB_ERR_CRYPTO or PB_ERR_EXHAUSTED (state untouched on either).
 * The caller persists `state` before it sends the response or acts on the
 * decision (box.c does).
 */
int pb_decide(const pb_box_config *config, const pb_crypto_port *crypto,
              pb_box_state *state, const pb_conditions *conditions,
              const uint8_t *command, size_t len, pb_decision *decision,
              uint8_t response[PB_RESPONSE_LEN]);

/* A status report (link type 0x82): status OK, kind 0, key_id 0, remaining
 * 0xFF, the box's own direction, box_seq + 1, tag over 12 zero bytes. */
int pb_status_report(const pb_box_config *config, const pb_crypto_port *crypto,
                     pb_box_state *state, const pb_conditions *conditions,
                     uint8_t response[PB_RESPONSE_LEN]);

/* A fresh state: nothing counted, no revocations, the given issuer keys
 * (each may be NULL for none). */
void pb_state_init(pb_box_state *state, const uint8_t *issuer_key,
                   const uint8_t *issuer_key_previous);

/* ---- Persistence (state.c) -------------------------------------------- */

/* Bytes of one slot: an 8-byte commit header, then the state image. */
#define PB_STATE_HEADER_LEN 8u
#define PB_STATE_BODY_LEN (4u + 4u + 1u + 2u * PB_PUBLIC_KEY_LEN + 2u + \
                           8u * PB_REVOCATION_CAPACITY + 9u * PB_TRIES_CAPACITY)
#define PB_STATE_IMAGE_LEN (PB_STATE_HEADER_LEN + PB_STATE_BODY_LEN)

/* Where the current image is, so the next goes to the other slot. */
typedef struct pb_store_cursor {
    uint32_t generation;   /* of the current image; 0: none yet */
    uint8_t slot;          /* the slot holding it */
} pb_store_cursor;

/* Loads the newest whole image. Returns PB_OK, 1 when neither slot holds a
 * whole image (a new box: state untouched), or PB_ERR_STORE. */
int pb_state_load(const pb_store_port *store, pb_store_cursor *cursor, pb_box_state *state);
/* Writes `state` into the other slot, commit header last. PB_OK or PB_ERR_STORE
 * (then the cursor still names the previous image). */
int pb_state_save(const pb_store_port *store, pb_store_cursor *cursor, const pb_box_state *state);

/* ---- The box (box.c): decide, persist, then answer --------------------- */

typedef struct pb_box {
    pb_box_config config;
    pb_box_state state;
    pb_store_cursor cursor;
    const pb_crypto_port *crypto;
    const pb_store_port *store;
    bool failed;           /* the store failed and the state could not be reloaded */
} pb_box;

/*
 * Starts a box: loads its saved state, or, on a new box, starts from the
 * provisioning file's issuer keys (each NULL for none) and saves that.
 * Returns PB_OK, PB_ERR_ARGUMENT (a bad config) or PB_ERR_STORE.
 */
int pb_box_start(pb_box *box, const pb_box_config *config, const pb_crypto_port *crypto,
                 const pb_store_port *store, const uint8_t *issuer_key,
                 const uint8_t *issuer_key_previous);

/*
 * Answers one command: decides, saves the new state, and only then fills
 * `response` and `decision`. On PB_ERR_STORE nothing may be sent or done:
 * the box reloads the state it had (a failed box answers nothing more).
 */
int pb_box_command(pb_box *box, const pb_conditions *conditions, const uint8_t *command,
                   size_t len, pb_decision *decision, uint8_t response[PB_RESPONSE_LEN]);

/* A status report, saved like an answer (it spends a box_seq). */
int pb_box_status_report(pb_box *box, const pb_conditions *conditions,
                         uint8_t response[PB_RESPONSE_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* PARKBOX_H */
