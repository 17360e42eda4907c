/* The default crypto port (pb_crypto_port) on mbed TLS 2.28: AES-128 block
 * encryption, SHA-256, ECDSA P-256 verification and point checks, and a
 * CTR-DRBG for random bytes. mbed TLS allocates its big numbers on the heap;
 * a board with a hardware engine writes its own port instead. */
#ifndef PARKBOX_MBEDTLS_H
#define PARKBOX_MBEDTLS_H

#include "parkbox.h"

#include <mbedtls/aes.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>

typedef struct pb_mbedtls {
    mbedtls_aes_context aes;
    uint8_t aes_key[PB_KEY_LEN];   /* the key `aes` is scheduled for */
    bool aes_keyed;
    mbedtls_ecp_group p256;        /* loaded once: loading costs more than a point check */
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
} pb_mbedtls;

/* Sets up `m` and points `port` at it. Returns 0, or an mbed TLS error. */
int pb_mbedtls_init(pb_mbedtls *m, pb_crypto_port *port);
void pb_mbedtls_free(pb_mbedtls *m);

#endif
