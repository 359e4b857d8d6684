#ifndef MOCKCHAT_COPENSSL_SHIM_H
#define MOCKCHAT_COPENSSL_SHIM_H
#include <openssl/sha.h>
#endif
