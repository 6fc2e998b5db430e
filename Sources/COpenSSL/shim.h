// The parts of the system's OpenSSL (libssl-dev, 3.0) that PrefsEtcd uses for https endpoints.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

// Macros Swift cannot import, as functions.
static inline long rvs_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
