package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/client"
)

// peopleCommands are the commands for people, the operators who sign in
// (docs/api.md §21.1), and for a browser client's redirect URIs. They talk
// to a running posgate like every operator command: an installation's
// first person is made with the operator client that `posgate client
// bootstrap` creates on the database (the demo's operator on a demo
// server), and that person then adds the others in the portal or through
// the operator API.
func peopleCommands() []command {
	return []command{
		{"user create", "create a person who signs in: EMAIL --role admin|pos-admin|company-admin|location-manager [--name N] [--pos P] [--companies c1,c2] [--locations l1,l2] --password-file F (- for stdin)", cmdUserCreate},
		{"user list", "list the people who sign in", cmdUserList},
		{"user disable", "disable a person (their sessions and tokens stop working within --cache-ttl): EMAIL-OR-ID", cmdUserDisabled(true)},
		{"user enable", "enable a person again: EMAIL-OR-ID", cmdUserDisabled(false)},
		{"client redirect-uris", "register the redirect URIs of a browser client (implicit and code flows), replacing any before: ID --uris U1,U2", cmdClientRedirectURIs},
	}
}

func cmdUserCreate(ctx context.Context, env *cli, args []string) error {
	var name, role, posID, companies, locations, passwordFile *string
	return operatorCommand(ctx, env, "user create", args, 1, func(fs *flag.FlagSet) {
		name = fs.String("name", "", "display name (default: the e-mail address)")
		role = fs.String("role", string(posgate.RoleAdmin), "role: admin, pos-admin, company-admin or location-manager")
		posID = fs.String("pos", "", "POS system of a pos-admin, company-admin or location-manager")
		companies = fs.String("companies", "", "a company-admin's companies, comma-separated")
		locations = fs.String("locations", "", "a location-manager's locations, comma-separated")
		passwordFile = fs.String("password-file", "", "file whose first line is the password (at least 10 characters); - reads it from stdin")
	}, func(a *client.Admin, pos []string) error {
		password, err := readPassword(*passwordFile)
		if err != nil {
			return err
		}
		n := *name
		if n == "" {
			n = posgate.NormalizeEmail(pos[0])
		}
		p, err := a.CreatePerson(ctx, client.CreatePersonRequest{Email: pos[0], Name: n, Password: password, Role: *role,
			PosSystemID: *posID, CompanyIds: splitList(*companies), LocationIds: splitList(*locations)})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "person %s (%s) created: role %s\n", p.Email, p.PersonID, p.Role)
		return nil
	})
}

// readPassword reads the first line of a file, or of stdin for "-": never a
// flag, so that the password stays out of the process list and the shell
// history.
func readPassword(file string) (string, error) {
	var r io.Reader
	switch file {
	case "":
		return "", errors.New("--password-file is required (- reads the password from stdin)")
	case "-":
		r = os.Stdin
	default:
		f, err := os.Open(file)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func cmdUserList(ctx context.Context, env *cli, args []string) error {
	return operatorCommand(ctx, env, "user list", args, 0, nil, func(a *client.Admin, _ []string) error {
		ps, err := a.ListPeople(ctx)
		if err != nil {
			return err
		}
		return table(env, []string{"EMAIL", "NAME", "ROLE", "POS", "COMPANIES", "LOCATIONS", "DISABLED"}, ps, func(p client.Person) []string {
			return []string{p.Email, p.Name, p.Role, p.PosSystemID, strings.Join(p.CompanyIds, ","), strings.Join(p.LocationIds, ","), fmt.Sprint(p.Disabled)}
		})
	})
}

func cmdUserDisabled(disabled bool) func(ctx context.Context, env *cli, args []string) error {
	return func(ctx context.Context, env *cli, args []string) error {
		name := "user enable"
		if disabled {
			name = "user disable"
		}
		return operatorCommand(ctx, env, name, args, 1, nil, func(a *client.Admin, pos []string) error {
			set := a.EnablePerson
			if disabled {
				set = a.DisablePerson
			}
			p, err := set(ctx, pos[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "person %s disabled=%v\n", p.Email, p.Disabled)
			return nil
		})
	}
}

func cmdClientRedirectURIs(ctx context.Context, env *cli, args []string) error {
	var uris *string
	return operatorCommand(ctx, env, "client redirect-uris", args, 1, func(fs *flag.FlagSet) {
		uris = fs.String("uris", "", "the redirect URIs, comma-separated (empty: the client leaves the browser flows)")
	}, func(a *client.Admin, pos []string) error {
		r, err := a.PutClientRedirectURIs(ctx, pos[0], client.PutClientRedirectURIsRequest{RedirectURIs: splitList(*uris)})
		if err != nil {
			return err
		}
		got := r.RedirectURIs
		fmt.Fprintf(env.stdout, "client %s: %d redirect URIs\n", pos[0], len(got))
		for _, u := range got {
			fmt.Fprintln(env.stdout, "  "+u)
		}
		return nil
	})
}
