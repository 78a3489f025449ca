package credential

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Parameters of the argon2id password hash (RFC 9106 §4, the second
// recommended option: 64 MiB, 3 passes), stored in every hash so that they
// can be raised later without invalidating older passwords.
const (
	argonTime    = 3
	argonMemory  = 64 * 1024 // KiB
	argonThreads = 2
	argonKeyLen  = 32
	argonSaltLen = 16

	// MinPasswordLen is the shortest password a person may be given.
	MinPasswordLen = 10
	// maxPasswordLen bounds the work an attacker can make one sign-in cost.
	maxPasswordLen = 1024
)

// HashPassword returns the argon2id hash of a person's password as a PHC
// string ($argon2id$v=19$m=…,t=…,p=…$salt$hash). People choose passwords,
// which carry little entropy, so unlike client secrets they get a slow hash.
func HashPassword(password string) (string, error) {
	if len(password) < MinPasswordLen || len(password) > maxPasswordLen {
		return "", fmt.Errorf("a password has %d to %d characters", MinPasswordLen, maxPasswordLen)
	}
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("auth: password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

var errBadHash = errors.New("auth: not an argon2id password hash")

// PasswordMatches reports whether password hashes to the PHC string hash,
// comparing in constant time.
func PasswordMatches(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	var mem, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &passes, &threads); err != nil || mem == 0 || passes == 0 || threads == 0 {
		return false, errBadHash
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false, errBadHash
	}
	if len(password) > maxPasswordLen {
		password = password[:maxPasswordLen] // still compared, never equal to a stored one's source by accident
	}
	got := argon2.IDKey([]byte(password), salt, passes, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
