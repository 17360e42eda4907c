/* The crypto port on mbed TLS 2.28 (parkbox_mbedtls.h). */
#include "parkbox_mbedtls.h"

#include <mbedtls/bignum.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/sha256.h>
#include <string.h>

/* 0x04 || X || Y: the uncompressed form mbed TLS reads. */
#define UNCOMPRESSED_LEN (1u + PB_PUBLIC_KEY_LEN)

static bool aes128_encrypt(void *ctx, const uint8_t key[PB_KEY_LEN], const uint8_t in[16],
                           uint8_t out[16])
{
    pb_mbedtls *m = ctx;
    /* The key schedule is kept for the last key: a CCM operation uses one key
     * for all its blocks. */
    if (!m->aes_keyed || memcmp(m->aes_key, key, PB_KEY_LEN) != 0) {
        m->aes_keyed = false;
        if (mbedtls_aes_setkey_enc(&m->aes, key, 128) != 0)
            return false;
        memcpy(m->aes_key, key, PB_KEY_LEN);
        m->aes_keyed = true;
    }
    return mbedtls_aes_crypt_ecb(&m->aes, MBEDTLS_AES_ENCRYPT, in, out) == 0;
}

static bool sha256(void *ctx, const uint8_t *data, size_t len, uint8_t digest[32])
{
    (void)ctx;
    return mbedtls_sha256_ret(data, len, digest, 0) == 0;
}

/* Reads X || Y into `q` and checks it is a point of P-256 (X, Y below p, on
 * the curve). */
static bool read_point(pb_mbedtls *m, const uint8_t public_key[PB_PUBLIC_KEY_LEN],
                       mbedtls_ecp_point *q)
{
    uint8_t raw[UNCOMPRESSED_LEN];
    raw[0] = 0x04;
    memcpy(raw + 1, public_key, PB_PUBLIC_KEY_LEN);
    return mbedtls_ecp_point_read_binary(&m->p256, q, raw, sizeof raw) == 0 &&
           mbedtls_ecp_check_pubkey(&m->p256, q) == 0;
}

static bool p256_point_valid(void *ctx, const uint8_t public_key[PB_PUBLIC_KEY_LEN])
{
    mbedtls_ecp_point q;
    bool ok;
    mbedtls_ecp_point_init(&q);
    ok = read_point(ctx, public_key, &q);
    mbedtls_ecp_point_free(&q);
    return ok;
}

static bool p256_verify(void *ctx, const uint8_t public_key[PB_PUBLIC_KEY_LEN],
                        const uint8_t digest[32], const uint8_t signature[PB_SIGNATURE_LEN])
{
    pb_mbedtls *m = ctx;
    mbedtls_ecp_point q;
    mbedtls_mpi r, s;
    bool ok;

    mbedtls_ecp_point_init(&q);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    /* mbedtls_ecdsa_verify checks 1 <= r, s < n and accepts a high s, as
     * docs/protocol.md asks (no low-S rule). */
    ok = read_point(m, public_key, &q) &&
         mbedtls_mpi_read_binary(&r, signature, 32) == 0 &&
         mbedtls_mpi_read_binary(&s, signature + 32, 32) == 0 &&
         mbedtls_ecdsa_verify(&m->p256, digest, 32, &q, &r, &s) == 0;
    mbedtls_ecp_point_free(&q);
    mbedtls_mpi_free(&r);
    mbedtls_mpi_free(&s);
    return ok;
}

static bool random_bytes(void *ctx, uint8_t *out, size_t len)
{
    pb_mbedtls *m = ctx;
    return mbedtls_ctr_drbg_random(&m->drbg, out, len) == 0;
}

int pb_mbedtls_init(pb_mbedtls *m, pb_crypto_port *port)
{
    static const char personalization[] = "libparkbox";
    int r;

    memset(m, 0, sizeof *m);
    mbedtls_aes_init(&m->aes);
    mbedtls_ecp_group_init(&m->p256);
    mbedtls_entropy_init(&m->entropy);
    mbedtls_ctr_drbg_init(&m->drbg);
    r = mbedtls_ecp_group_load(&m->p256, MBEDTLS_ECP_DP_SECP256R1);
    if (r == 0)
        r = mbedtls_ctr_drbg_seed(&m->drbg, mbedtls_entropy_func, &m->entropy,
                                  (const unsigned char *)personalization,
                                  sizeof personalization - 1u);
    if (r != 0) {
        pb_mbedtls_free(m);
        return r;
    }
    port->ctx = m;
    port->aes128_encrypt = aes128_encrypt;
    port->sha256 = sha256;
    port->p256_verify = p256_verify;
    port->p256_point_valid = p256_point_valid;
    port->random = random_bytes;
    return 0;
}

void pb_mbedtls_free(pb_mbedtls *m)
{
    mbedtls_aes_free(&m->aes);
    mbedtls_ecp_group_free(&m->p256);
    mbedtls_ctr_drbg_free(&m->drbg);
    mbedtls_entropy_free(&m->entropy);
    m->aes_keyed = false;
}
