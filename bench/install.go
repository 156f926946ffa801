package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// installedJS is where npm ci puts the peers' copy of js/ (install-links:
// a copy, not a link).
var installedJS = filepath.Join(peersDir, "node_modules", "@graphstate", "redcheck")

// jsPackageFiles are the parts of js/ its package holds (its "files", and
// package.json).
var jsPackageFiles = []string{"dist", "lua", "README.md", "package.json"}

// installJS readies redcheck-js for the Node harnesses: js/ installed and
// built from its current sources, the peers installed, and the peers' copy
// of js/ the same as js/'s package files. npm ci copies js/ once, when it
// installs the peers: without the refresh, a later change to js/ would go
// unmeasured, the harness running the old copy.
func installJS(ctx context.Context, log io.Writer) error {
	installed, err := npmCI(ctx, jsDir, log)
	if err != nil {
		return err
	}
	if !installed { // npm ci builds js/ (its prepare script); an install already there may predate its sources
		bctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(bctx, "npm", "run", "build")
		cmd.Dir, cmd.Stdout, cmd.Stderr = jsDir, log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("npm run build in %s failed: %w", jsDir, err)
		}
	}
	if _, err := npmCI(ctx, peersDir, log); err != nil {
		return err
	}
	copied, err := refreshCopy(jsDir, installedJS, jsPackageFiles)
	if copied {
		fmt.Fprintf(log, "peers: %s differed from %s: copied it again\n", installedJS, jsDir)
	}
	return err
}

// refreshCopy makes names under dst the same as under src (files and
// directories), unless they already are; it reports whether it copied.
func refreshCopy(src, dst string, names []string) (bool, error) {
	same, err := sameTrees(src, dst, names)
	if err != nil || same {
		return false, err
	}
	for _, name := range names {
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if err := os.RemoveAll(to); err != nil {
			return false, err
		}
		fi, err := os.Stat(from)
		switch {
		case os.IsNotExist(err):
			continue
		case err != nil:
			return false, err
		case fi.IsDir():
			err = os.CopyFS(to, os.DirFS(from))
		default:
			var b []byte
			if b, err = os.ReadFile(from); err == nil {
				err = os.WriteFile(to, b, 0o644)
			}
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// npmCI installs dir/node_modules with npm ci unless it is there (first run
// only), and reports whether it did. A failed install is removed, so that
// the next run tries again.
func npmCI(ctx context.Context, dir string, log io.Writer) (bool, error) {
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(modules); err == nil {
		return false, nil
	}
	fmt.Fprintf(log, "peers: installing %s with npm ci (first run only)\n", modules)
	ictx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ictx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(modules)
		return false, fmt.Errorf("npm ci in %s failed: %w", dir, err)
	}
	return true, nil
}

// sameTrees reports whether every file under names in dir a has the same
// content in dir b, and b has no other file under them.
func sameTrees(a, b string, names []string) (bool, error) {
	files := func(root string) (map[string][]byte, error) {
		out := map[string][]byte{}
		for _, name := range names {
			err := filepath.WalkDir(filepath.Join(root, name), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				out[rel], err = os.ReadFile(p)
				return err
			})
			if err != nil && !os.IsNotExist(err) {
				return nil, err
			}
		}
		return out, nil
	}
	fa, err := files(a)
	if err != nil {
		return false, err
	}
	fb, err := files(b)
	if err != nil {
		return false, err
	}
	if len(fa) != len(fb) {
		return false, nil
	}
	for k, v := range fa {
		if w, ok := fb[k]; !ok || !bytes.Equal(v, w) {
			return false, nil
		}
	}
	return true, nil
}
