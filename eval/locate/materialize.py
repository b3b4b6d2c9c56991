#!/usr/bin/env python3
"""Materialize the real source trees that eval/locate/names.tsv is scored against.

Usage: materialize.py [DEST] [--mirror-root DIR] [--only TREE[,TREE...]] [--list]

DEST defaults to /work/eval-trees. Each tree is unpacked into DEST/<tree-id>/ and
stamped with DEST/<tree-id>/.materialized (the spec it was made from); a tree whose
stamp matches is left alone, so running the script twice does nothing the second
time. Downloaded archives are kept in DEST/_downloads/ (never in the repository).

Three kinds of source:
  pip    exact wheel files from PyPI (`pip download --no-deps --only-binary :all:` with
         the platform/ABI tags of the pinned file name, then a sha256 check), unzipped
         together into one tree, laid out as site-packages would be.
  git    a public GitHub repository at a pinned commit, taken from a bare git
         directory (every blob of the commit, as `git archive <commit> | tar -x` would
         write it, leaving out blobs the mirror lacks). The bare directory is the one the
         session tool `fetch github:<owner>/<name>` leaves under the mirror root
         (default /work/.mirror/<owner>+<name>/repo); or pass --mirror-root pointing at
         directories of the same layout made with `git clone --bare`. Submodules are not
         included (git archive does not follow them): that is intended, it makes trees
         that mention third-party kernels they do not contain.
  local  a tarball already in the shared traces (the inductor cache behind the
         compiled traces).
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

SHARED = os.environ.get("KERNLENS_SHARED", "/work/shared")

# tree id -> spec. Versions and commits are pinned: names.tsv's expected paths are
# facts about exactly these files.
TREES = {
    # pip wheels
    "site-vllm": {"kind": "pip", "wheels": [
        ["vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl",
         "4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa"],
        ["triton_kernels-0.1.0-py3-none-any.whl",
         "ab8f697e1504c7b02b130f22054eb32cb36d5607730ddaf94be92dd7d38ebddd"]]},
    "site-sglang": {"kind": "pip", "wheels": [
        ["sglang-0.5.10.post1-py3-none-any.whl",
         "a854a68b11caf6b4b55c241a44378a7cdede7ede325db85c955f131506703bc6"],
        ["sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl",
         "57dfb3a2a3cd759f499c32e2bad5f6489b7c58f7f9a84ee00c53ec92d303aaab"]]},
    "liger-kernel": {"kind": "pip", "wheels": [
        ["liger_kernel-0.8.5-py3-none-any.whl",
         "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9"]]},
    "fla-core": {"kind": "pip", "wheels": [
        ["fla_core-0.6.0-py3-none-any.whl",
         "b0708b70e0b119cd58a0a5146ea56cb175cef6ed969d8ac60267e3e077ce3ebd"]]},
    "flashinfer": {"kind": "pip", "wheels": [
        ["flashinfer_python-0.7.4-py3-none-any.whl",
         "a051a62e09a2738e8b0de47a1944fd2f0f3eff01b728b662141ea660cb09dd32"]]},
    "flydsl": {"kind": "pip", "wheels": [
        ["flydsl-0.5.0-cp311-cp311-manylinux_2_27_x86_64.whl",
         "e8152bff6d02269236a2d7522592d97d856f7712e8a3c6b91136df4bc4221e22"]]},
    "torch": {"kind": "pip", "wheels": [
        ["torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl",
         "7aa2f9bbc6d4595ba72138026b2074be1233186150e9292865e04b7a63b8c67a"]]},
    "xformers-wheel": {"kind": "pip", "wheels": [
        ["xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl",
         "ccc73c7db9890224ab05f5fb60e2034f9e6c8672a10be0cf00e95cbbae3eda7c"]]},
    # git repositories at pinned commits (need `fetch github:<repo>` first)
    "flash-attention": {"kind": "git", "repo": "Dao-AILab/flash-attention",
                        "commit": "0251105a2fb19d2957484b7f023cd8c115286ced"},
    "mamba": {"kind": "git", "repo": "state-spaces/mamba",
              "commit": "e9594ce1c732d97440f0332fdc43170a2294dbfa"},
    "causal-conv1d": {"kind": "git", "repo": "Dao-AILab/causal-conv1d",
                      "commit": "0d2252d161f25f7907bbd05985c08ab98d255874"},
    "aiter": {"kind": "git", "repo": "ROCm/aiter",
              "commit": "e4048607a535ace3a2b51ded31b1c8c2d45c0879"},
    "deepspeed": {"kind": "git", "repo": "deepspeedai/DeepSpeed",
                  "commit": "edaa7221267243c7be7fb49c5d5f5c4fb97b4641"},
    "xformers": {"kind": "git", "repo": "facebookresearch/xformers",
                 "commit": "ca6d2aa0d43241fc8a8dcd872debc2406160160d"},
    "composable-kernel": {"kind": "git", "repo": "ROCm/composable_kernel",
                          "commit": "8e22e1ae31bbf7086f69d8724e027676791d351a"},
    "apex": {"kind": "git", "repo": "NVIDIA/apex",
             "commit": "6424da3b4faa6c8f062da4a48c424fff3f02d42d"},
    # the inductor cache behind compiled.json.gz / compiled_ro.json.gz
    "inductor-h200": {"kind": "local", "tarball": "traces/inductor_src.tar.gz"},
}


def stamp_text(tree, spec):
    return json.dumps({"tree": tree, **spec}, sort_keys=True)


def is_done(dest, tree, spec):
    p = os.path.join(dest, tree, ".materialized")
    try:
        with open(p) as f:
            return f.read() == stamp_text(tree, spec)
    except OSError:
        return False


def finish(dest, tree, spec, staging):
    """Stamp the staging directory and move it into place (a half-made tree never
    carries a stamp, so an interrupted run redoes it)."""
    with open(os.path.join(staging, ".materialized"), "w") as f:
        f.write(stamp_text(tree, spec))
    final = os.path.join(dest, tree)
    if os.path.exists(final):
        shutil.rmtree(final)
    os.rename(staging, final)


def count_files(root):
    n = 0
    for _, _, files in os.walk(root):
        n += len(files)
    return n


def pip_download_args(filename):
    """pip options that select exactly this wheel file (its name's tags), whatever
    Python runs this script."""
    _name, _ver, py, abi, plat = filename[: -len(".whl")].split("-")[-5:]
    args = []
    if plat != "any":
        args += ["--platform", plat]
    if py.startswith("cp"):
        args += ["--implementation", "cp", "--python-version", f"{py[2]}.{py[3:]}",
                 "--abi", abi]
    elif plat != "any":
        args += ["--python-version", "3.11", "--abi", abi]
    return args


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def make_pip(dest, tree, spec, staging):
    downloads = os.path.join(dest, "_downloads")
    os.makedirs(downloads, exist_ok=True)
    for filename, sha in spec["wheels"]:
        whl = os.path.join(downloads, filename)
        if not os.path.isfile(whl):
            name, version = filename.split("-")[:2]
            req = f"{name.replace('_', '-')}=={version}"
            # The file is pinned by name and hash, so the package's Requires-Python
            # is not checked: an abi3 wheel's tag names the oldest Python (cp38)
            # while the package may require a newer one.
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                   ":all:", "--ignore-requires-python", *pip_download_args(filename),
                   "-d", downloads, req]
            print("  $", " ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)
            if not os.path.isfile(whl):
                raise SystemExit(f"pip did not download {filename}")
        got = sha256_of(whl)
        if got != sha:
            raise SystemExit(f"{whl}: sha256 {got}, expected {sha} (a different build?)")
        print(f"  unzip {filename} (sha256 ok)", flush=True)
        with zipfile.ZipFile(whl) as z:
            z.extractall(staging)


def make_git(dest, tree, spec, staging, mirror_root):
    owner, name = spec["repo"].split("/")
    gitdir = os.path.join(mirror_root, f"{owner}+{name}", "repo")
    if not os.path.isdir(gitdir):
        gitdir = os.path.join(mirror_root, f"{owner}+{name}")
    if not os.path.isdir(gitdir):
        raise LookupError(
            f"no bare git directory for {spec['repo']} under {mirror_root}: run the session "
            f"tool `fetch github:{spec['repo']}` (or `git clone --bare` it there)")
    have = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "-e",
                           spec["commit"] + "^{commit}"], capture_output=True)
    if have.returncode != 0:
        raise LookupError(f"{gitdir} lacks commit {spec['commit']}")
    print(f"  git checkout-less export {spec['repo']}@{spec['commit'][:12]}", flush=True)
    skipped = export_commit(gitdir, spec["commit"], staging)
    if skipped:
        # A snapshot may list its largest files without holding them (binaries,
        # papers, images): those are left out and named here.
        print(f"  left out {len(skipped)} blob(s) the mirror lacks: "
              + ", ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else ""))


def export_commit(gitdir, commit, staging):
    """Write every blob of `commit` under `staging` (what `git archive | tar -x` does),
    skipping blobs absent from the object store; returns the skipped paths."""
    ls = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "-r", "-z", "--full-tree",
                         commit], capture_output=True, check=True).stdout
    entries = []
    for rec in ls.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, typ, oid = meta.split()
        if typ != b"blob":
            continue  # submodule commits (gitlinks) are not followed
        entries.append((mode, oid, path.decode("utf-8", "surrogateescape")))
    cat = subprocess.Popen(["git", "--git-dir", gitdir, "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    skipped = []
    for mode, oid, path in entries:
        cat.stdin.write(oid + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            skipped.append(path)
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        out = os.path.join(staging, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if mode == b"120000":
            os.symlink(data.decode("utf-8", "surrogateescape"), out)
            continue
        with open(out, "wb") as f:
            f.write(data)
        if mode == b"100755":
            os.chmod(out, 0o755)
    cat.stdin.close()
    cat.wait()
    return skipped


def make_local(dest, tree, spec, staging):
    src = os.path.join(SHARED, spec["tarball"])
    print(f"  untar {src}", flush=True)
    with tarfile.open(src) as t:
        t.extractall(staging, filter="data")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", nargs="?", default="/work/eval-trees")
    ap.add_argument("--mirror-root", default="/work/.mirror")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true", help="print the tree specs and exit")
    a = ap.parse_args()
    if a.list:
        for t, s in TREES.items():
            print(t, json.dumps(s, sort_keys=True))
        return 0
    only = {x for x in a.only.split(",") if x}
    unknown = only - TREES.keys()
    if unknown:
        raise SystemExit(f"unknown tree(s): {sorted(unknown)}")
    os.makedirs(a.dest, exist_ok=True)
    missing = []
    for tree, spec in TREES.items():
        if only and tree not in only:
            continue
        if is_done(a.dest, tree, spec):
            print(f"{tree}: up to date ({count_files(os.path.join(a.dest, tree))} files)")
            continue
        print(f"{tree}: making", flush=True)
        staging = os.path.join(a.dest, f".{tree}.partial")
        if os.path.exists(staging):
            shutil.rmtree(staging)
        os.makedirs(staging)
        try:
            if spec["kind"] == "pip":
                make_pip(a.dest, tree, spec, staging)
            elif spec["kind"] == "git":
                make_git(a.dest, tree, spec, staging, a.mirror_root)
            else:
                make_local(a.dest, tree, spec, staging)
        except LookupError as e:
            shutil.rmtree(staging)
            print(f"{tree}: SKIPPED: {e}")
            missing.append(tree)
            continue
        finish(a.dest, tree, spec, staging)
        print(f"{tree}: made {os.path.join(a.dest, tree)} "
              f"({count_files(os.path.join(a.dest, tree))} files)")
    if missing:
        print(f"missing trees (rows for them are skipped by score.py): {', '.join(missing)}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
