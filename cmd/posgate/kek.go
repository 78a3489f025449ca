package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth"
)

// The key-encryption key (KEK) that seals the token signing keys at rest
// (docs/deployment.md, "Signing keys at rest"): from a file
// (--key-encryption-key-file, also POSGATE_KEY_ENCRYPTION_KEY_FILE) or,
// for platforms that hand secrets over in the environment, from
// POSGATE_KEY_ENCRYPTION_KEY itself. The previous KEK, while a KEK
// rotation is rolled out, comes the same two ways.
const (
	kekEnv         = "POSGATE_KEY_ENCRYPTION_KEY"
	previousKEKEnv = "POSGATE_PREVIOUS_KEY_ENCRYPTION_KEY"
)

// kekFlags are the KEK flags of serve and keys rotate-kek.
type kekFlags struct {
	file, previousFile *string
}

func addKEKFlags(fs *flag.FlagSet) kekFlags {
	return kekFlags{
		file:         fs.String("key-encryption-key-file", "", "file holding the key-encryption key that seals the token signing keys at rest (32 bytes in base64: openssl rand -base64 32); or the key itself in "+kekEnv),
		previousFile: fs.String("previous-key-encryption-key-file", "", "file holding the previous key-encryption key, still accepted to open keys while a KEK rotation is rolled out; or the key itself in "+previousKEKEnv),
	}
}

// load returns the KEKs given, nil when none is: the current one seals,
// the previous one only opens. A previous KEK without a current one is a
// mistake.
func (f kekFlags) load(env *cli) (*auth.KeyEncryption, error) {
	current, err := readKEK(env, *f.file, "--key-encryption-key-file", kekEnv)
	if err != nil {
		return nil, err
	}
	previous, err := readKEK(env, *f.previousFile, "--previous-key-encryption-key-file", previousKEKEnv)
	if err != nil {
		return nil, err
	}
	if current == nil {
		if previous != nil {
			return nil, usagef("a previous key-encryption key needs the current one (--key-encryption-key-file or %s)", kekEnv)
		}
		return nil, nil
	}
	var prev [][]byte
	if previous != nil {
		prev = append(prev, previous)
	}
	return auth.NewKeyEncryption(current, prev...)
}

// readKEK reads a KEK from file, else from the variable envKey; nil when
// neither is set. Both set is refused: one of them would be ignored.
func readKEK(env *cli, file, flagName, envKey string) ([]byte, error) {
	inEnv := env.getenv(envKey)
	switch {
	case file != "" && inEnv != "":
		return nil, usagef("give the key-encryption key once: %s or %s, not both", flagName, envKey)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flagName, err)
		}
		k, err := auth.ParseKEK(b)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flagName, file, err)
		}
		return k, nil
	case inEnv != "":
		k, err := auth.ParseKEK([]byte(inEnv))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envKey, err)
		}
		return k, nil
	}
	return nil, nil
}

// cmdKeysRotateKEK seals every stored signing key with the current KEK:
// plain keys (a store that ran without a KEK) and keys sealed with the
// previous KEK alike. serve does the same at every start; this command
// does it without a restart and reports what it did.
func cmdKeysRotateKEK(ctx context.Context, env *cli, args []string) error {
	var kf kekFlags
	return storeCommand(ctx, env, "keys rotate-kek", args, 0, func(fs *flag.FlagSet) {
		kf = addKEKFlags(fs)
	}, func(st posgate.Store, _ []string) error {
		kek, err := kf.load(env)
		if err != nil {
			return err
		}
		if kek == nil {
			return usagef("keys rotate-kek needs the key-encryption key to seal with (--key-encryption-key-file or %s)", kekEnv)
		}
		n, err := auth.SealKeys(ctx, st, kek)
		if err != nil {
			return err
		}
		keys, err := st.ListSigningKeys(ctx)
		if err != nil {
			return err
		}
		env.say(map[string]any{"sealed": n, "keys": len(keys), "kek": kek.Fingerprint()},
			"%d of %d signing keys sealed again; every key is now sealed with the key-encryption key %s\n", n, len(keys), kek.Fingerprint())
		return nil
	})
}
