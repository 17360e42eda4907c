/* AES-128-CCM with an 8-byte tag and a 12-byte nonce (docs/protocol.md, Keys;
 * RFC 3610, NIST SP 800-38C), over the port's AES block encryption. L = 3
 * (15 - 12 bytes of nonce), so a message is at most 2^24 - 1 bytes; AAD is
 * at most 0xFEFF bytes (its 2-byte length form), far above any frame.
 *
 * There is no "decipher that never saw update()" here: the tag is always
 * recomputed over B0, the AAD and the plaintext, and compared in constant
 * time, empty plaintext included (docs/protocol.md, Keys: the trap). */
#include "parkbox.h"

#include <string.h>

#define BLOCK 16u
#define LENGTH_BYTES 3u                                  /* L */
#define B0_FLAGS ((((PB_TAG_LEN - 2u) / 2u) << 3) | (LENGTH_BYTES - 1u))
#define ADATA 0x40u
#define CTR_FLAGS (LENGTH_BYTES - 1u)
#define MAX_SHORT_AAD 0xFEFFu

bool pb_equal_ct(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint8_t diff = 0;
    size_t i;
    for (i = 0; i < n; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

/* A counter block A_i: flags || nonce || i (3 bytes). */
static void counter_block(const uint8_t nonce[PB_NONCE_LEN], uint32_t i, uint8_t a[BLOCK])
{
    a[0] = (uint8_t)CTR_FLAGS;
    memcpy(a + 1, nonce, PB_NONCE_LEN);
    a[13] = (uint8_t)(i >> 16);
    a[14] = (uint8_t)(i >> 8);
    a[15] = (uint8_t)i;
}

/* The CBC-MAC state: the running block X and how much of the next input
 * block has been absorbed. */
typedef struct mac {
    const pb_crypto_port *crypto;
    const uint8_t *key;
    uint8_t x[BLOCK];
    unsigned fill;
    bool ok;
} mac;

static void mac_block(mac *m)
{
    if (!m->crypto->aes128_encrypt(m->crypto->ctx, m->key, m->x, m->x))
        m->ok = false;
    m->fill = 0;
}

static void mac_absorb(mac *m, const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; i++) {
        m->x[m->fill++] ^= data[i];
        if (m->fill == BLOCK)
            mac_block(m);
    }
}

/* Pads the current input block with zeros (XOR with 0 leaves X as is). */
static void mac_pad(mac *m)
{
    if (m->fill > 0)
        mac_block(m);
}

/* T = the first 8 bytes of the CBC-MAC over B0 || AAD || plaintext. */
static bool cbc_mac(const pb_crypto_port *crypto, const uint8_t key[PB_KEY_LEN],
                    const uint8_t nonce[PB_NONCE_LEN], const uint8_t *aad, size_t aad_len,
                    const uint8_t *plaintext, size_t len, uint8_t t[BLOCK])
{
    mac m;
    uint8_t b0[BLOCK];
    uint8_t aad_prefix[2];

    m.crypto = crypto;
    m.key = key;
    m.fill = 0;
    m.ok = true;
    memset(m.x, 0, BLOCK);
    b0[0] = (uint8_t)(B0_FLAGS | (aad_len > 0 ? ADATA : 0u));
    memcpy(b0 + 1, nonce, PB_NONCE_LEN);
    b0[13] = (uint8_t)(len >> 16);
    b0[14] = (uint8_t)(len >> 8);
    b0[15] = (uint8_t)len;
    mac_absorb(&m, b0, BLOCK);
    if (aad_len > 0) {
        aad_prefix[0] = (uint8_t)(aad_len >> 8);
        aad_prefix[1] = (uint8_t)aad_len;
        mac_absorb(&m, aad_prefix, 2);
        mac_absorb(&m, aad, aad_len);
        mac_pad(&m);
    }
    mac_absorb(&m, plaintext, len);
    mac_pad(&m);
    memcpy(t, m.x, BLOCK);
    return m.ok;
}

/* out = in XOR the key stream S_1, S_2, ... (CTR mode from counter 1). */
static bool ctr(const pb_crypto_port *crypto, const uint8_t key[PB_KEY_LEN],
                const uint8_t nonce[PB_NONCE_LEN], const uint8_t *in, size_t len, uint8_t *out)
{
    uint8_t a[BLOCK], s[BLOCK];
    size_t done = 0;
    uint32_t i = 1;

    while (done < len) {
        size_t j, n = len - done < BLOCK ? len - done : BLOCK;
        counter_block(nonce, i++, a);
        if (!crypto->aes128_encrypt(crypto->ctx, key, a, s))
            return false;
        for (j = 0; j < n; j++)
            out[done + j] = (uint8_t)(in[done + j] ^ s[j]);
        done += n;
    }
    return true;
}

/* The tag: T XOR S_0. */
static bool tag_of(const pb_crypto_port *crypto, const uint8_t key[PB_KEY_LEN],
                   const uint8_t nonce[PB_NONCE_LEN], uint8_t t[BLOCK])
{
    uint8_t a[BLOCK], s0[BLOCK];
    unsigned j;
    counter_block(nonce, 0, a);
    if (!crypto->aes128_encrypt(crypto->ctx, key, a, s0))
        return false;
    for (j = 0; j < PB_TAG_LEN; j++)
        t[j] ^= s0[j];
    return true;
}

static bool sizes_ok(size_t aad_len, size_t len)
{
    return aad_len <= MAX_SHORT_AAD && len < ((size_t)1 << (8u * LENGTH_BYTES));
}

int pb_ccm_seal(const pb_crypto_port *crypto, const uint8_t key[PB_KEY_LEN],
                const uint8_t nonce[PB_NONCE_LEN], const uint8_t *aad, size_t aad_len,
                uint8_t *data, size_t len, uint8_t tag[PB_TAG_LEN])
{
    uint8_t t[BLOCK];
    if (!sizes_ok(aad_len, len))
        return PB_ERR_ARGUMENT;
    if (!cbc_mac(crypto, key, nonce, aad, aad_len, data, len, t) ||
        !tag_of(crypto, key, nonce, t) || !ctr(crypto, key, nonce, data, len, data))
        return PB_ERR_CRYPTO;
    memcpy(tag, t, PB_TAG_LEN);
    return PB_OK;
}

int pb_ccm_open(const pb_crypto_port *crypto, const uint8_t key[PB_KEY_LEN],
                const uint8_t nonce[PB_NONCE_LEN], const uint8_t *aad, size_t aad_len,
                const uint8_t *in, size_t len, uint8_t *out, const uint8_t tag[PB_TAG_LEN])
{
    uint8_t t[BLOCK];
    if (!sizes_ok(aad_len, len))
        return PB_ERR_ARGUMENT;
    if (!ctr(crypto, key, nonce, in, len, out) ||
        !cbc_mac(crypto, key, nonce, aad, aad_len, out, len, t) ||
        !tag_of(crypto, key, nonce, t)) {
        memset(out, 0, len);
        return PB_ERR_CRYPTO;
    }
    if (!pb_equal_ct(t, tag, PB_TAG_LEN)) {
        memset(out, 0, len);
        return 1;
    }
    return PB_OK;
}
