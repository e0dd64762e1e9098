"""A small Hugging Face Hub on loopback: the part of the Hub HTTP API that an upload and a ``load_dataset`` use.

Implemented: repo creation, branches, YAML validation, preupload, the LFS batch API with plain PUT uploads,
ndjson commits (base64 and LFS files, deletions, ``parentCommit``), repo info, tree listing, paths-info and
``resolve`` downloads (with ranges). Repos live in memory as commits of ``path -> bytes`` maps; LFS objects are
kept by sha256, so a test can count how often each object was uploaded.

Faults are injected per request: :meth:`LocalHub.fail` answers the next N matching requests with a status code
(or drops the connection without an answer), and :meth:`LocalHub.hold` blocks matching requests until released,
so a test can kill a client mid-upload.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

LFS_SUFFIXES = (".parquet", ".arrow", ".wav", ".flac", ".bin")


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


@dataclass
class Fault:
    method: str
    pattern: re.Pattern
    times: int
    status: int | None  # None: drop the connection without answering
    after: bool = False  # drop the connection after the request took effect (a lost answer)
    skip: int = 0  # matching requests to let through first


@dataclass
class Hold:
    method: str
    pattern: re.Pattern
    skip: int = 0  # matching requests to let through first
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class Repo:
    private: bool
    branches: dict[str, str]  # branch -> commit oid
    commits: dict[str, dict]  # oid -> {"parent", "files": {path: (data, is_lfs)}, "summary"}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # clients close idle keep-alive connections; the tests check outcomes, not socket chatter
        pass


class LocalHub:
    def __init__(self, port: int = 0):
        self.repos: dict[str, Repo] = {}  # "datasets/org/name" -> Repo
        self.lfs_objects: dict[tuple[str, str], bytes] = {}  # (repo, sha256) -> content; LFS storage is per repo
        self.lfs_puts: dict[tuple[str, str], int] = {}  # (repo, sha256) -> completed uploads
        self.requests: list[tuple[str, str]] = []
        self.authorizations: set[str] = set()
        self.faults: list[Fault] = []
        self.holds: list[Hold] = []
        self.lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", port), _make_handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "LocalHub":
        self._thread.start()
        return self

    def stop(self) -> None:
        for hold in self.holds:
            hold.release.set()
        self._server.shutdown()
        self._server.server_close()

    # --- fault injection -------------------------------------------------------------------------------------
    def fail(self, method: str, path_regex: str, *, times: int = 1, status: int | None = 500, after: bool = False, skip: int = 0) -> None:
        """After letting ``skip`` matching requests through, answer the next ``times`` requests matching ``method``
        and ``path_regex`` with ``status``, or with ``status=None`` drop the connection instead of answering
        (``after=True``: once the request took effect)."""
        with self.lock:
            self.faults.append(Fault(method, re.compile(path_regex), times, status, after, skip))

    def hold(self, method: str, path_regex: str, *, skip: int = 0) -> Hold:
        """Block the first matching request after ``skip`` until released; ``reached`` is set when it arrives."""
        hold = Hold(method, re.compile(path_regex), skip)
        with self.lock:
            self.holds.append(hold)
        return hold

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()
            for hold in self.holds:
                hold.release.set()
            self.holds.clear()

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.method == method and fault.pattern.search(path):
                    if fault.skip > 0:
                        fault.skip -= 1
                        continue
                    fault.times -= 1
                    return fault
        return None

    def _take_hold(self, method: str, path: str) -> Hold | None:
        with self.lock:
            for hold in self.holds:
                if hold.method == method and hold.pattern.search(path) and not hold.reached.is_set():
                    if hold.skip > 0:
                        hold.skip -= 1
                        continue
                    return hold
        return None

    # --- repo state --------------------------------------------------------------------------------------------
    def files(self, repo_key: str, revision: str = "main") -> dict[str, bytes]:
        """The files of a repo at a revision, LFS files resolved to their content."""
        repo = self.repos[repo_key]
        commit = repo.commits[repo.branches.get(revision, revision)]
        return {path: data for path, (data, _) in commit["files"].items()}

    def commit_count(self, repo_key: str) -> int:
        return len(self.repos[repo_key].commits)

    def new_commit(self, repo: Repo, branch: str, files: dict, summary: str) -> str:
        parent = repo.branches.get(branch)
        oid = hashlib.sha1(f"{parent}|{summary}|{time.time_ns()}|{len(repo.commits)}".encode()).hexdigest()
        repo.commits[oid] = {"parent": parent, "files": files, "summary": summary}
        repo.branches[branch] = oid
        return oid


def _make_handler(hub: LocalHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        # -- plumbing ----------------------------------------------------------------------------------------
        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head and self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, status: int, obj: object, headers: dict | None = None) -> None:
            self._send(status, json.dumps(obj).encode(), {"Content-Type": "application/json", **(headers or {})})

        def _error(self, status: int, message: str) -> None:
            self._json(status, {"error": message}, {"X-Error-Message": message})

        def _dispatch(self, method: str) -> None:
            url = urlsplit(self.path)
            path, query = unquote(url.path), parse_qs(url.query)
            hub.requests.append((method, path))
            if auth := self.headers.get("Authorization"):
                hub.authorizations.add(auth)
            body = self._body() if method in ("POST", "PUT") else b""
            if hold := hub._take_hold(method, path):
                hold.reached.set()
                hold.release.wait(timeout=60)
            fault = hub._take_fault(method, path)
            if fault is not None and not fault.after:
                if fault.status is None:
                    return self._drop()
                return self._error(fault.status, "injected fault")
            if fault is not None:
                self.wfile = io.BytesIO()  # the handler runs; its answer never reaches the client
            for pattern, handler in ROUTES:
                if pattern[0] == method and (match := re.fullmatch(pattern[1], path)):
                    handler(self, match, query, body)
                    break
            else:
                self._error(404, f"no route for {method} {path}")
            if fault is not None:
                self._drop()

        def _drop(self) -> None:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            self.connection.close()

        def do_GET(self) -> None:
            self._dispatch("GET")

        def do_HEAD(self) -> None:
            self._dispatch("HEAD")

        def do_POST(self) -> None:
            self._dispatch("POST")

        def do_PUT(self) -> None:
            self._dispatch("PUT")

        # -- repo helpers ------------------------------------------------------------------------------------
        def _repo(self, kind: str, repo_id: str) -> Repo | None:
            repo = hub.repos.get(f"{kind}/{repo_id}")
            if repo is None:
                self._json(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
            return repo

        def _commit(self, repo: Repo, revision: str) -> tuple[str, dict] | None:
            oid = repo.branches.get(revision, revision if revision in repo.commits else None)
            if oid is None:
                self._json(404, {"error": f"Invalid rev id: {revision}"}, {"X-Error-Code": "RevisionNotFound"})
                return None
            return oid, repo.commits[oid]

        def _repo_commit(self, match) -> tuple[str, dict] | None:
            """The commit that the request's repo and revision name; None once a 404 has been answered."""
            repo = self._repo(match["kind"], match["repo"])
            return None if repo is None else self._commit(repo, match["rev"])

        # -- endpoints -----------------------------------------------------------------------------------------
        def create_repo(self, match, query, body) -> None:
            payload = json.loads(body)
            kind = {"dataset": "datasets", "model": "models", "space": "spaces"}[payload.get("type", "model")]
            repo_id = f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
            key = f"{kind}/{repo_id}"
            url = {"url": f"{hub.endpoint}/{kind}/{repo_id}" if kind != "models" else f"{hub.endpoint}/{repo_id}"}
            with hub.lock:
                if key in hub.repos:
                    return self._json(409, {**url, "error": "You already created this dataset repo"})
                repo = Repo(private=payload.get("visibility") == "private", branches={}, commits={})
                hub.new_commit(repo, "main", {".gitattributes": (b"*.parquet filter=lfs diff=lfs merge=lfs -text\n", False)}, "initial commit")
                hub.repos[key] = repo
            self._json(200, url)

        def create_branch(self, match, query, body) -> None:
            repo = self._repo(match["kind"], match["repo"])
            if repo is None:
                return
            branch = match["branch"]
            with hub.lock:
                if branch in repo.branches:
                    return self._error(409, "Reference already exists")
                repo.branches[branch] = repo.branches["main"]
            self._json(200, {})

        def validate_yaml(self, match, query, body) -> None:
            content = json.loads(body)["content"]
            header = re.match(r"^---\n(.*?)\n---\n", content, re.S)
            try:
                if header:
                    yaml.safe_load(header.group(1))
            except yaml.YAMLError as error:
                return self._json(400, {"errors": [{"message": str(error)}], "warnings": []})
            self._json(200, {"errors": [], "warnings": []})

        def preupload(self, match, query, body) -> None:
            found = self._repo_commit(match)
            if found is None:
                return
            existing = found[1]["files"]
            files = []
            for entry in json.loads(body)["files"]:
                lfs = entry["path"].endswith(LFS_SUFFIXES) or entry["size"] > 10_000_000
                oid = None
                if entry["path"] in existing:
                    data, is_lfs = existing[entry["path"]]
                    oid = hashlib.sha256(data).hexdigest() if is_lfs else git_blob_sha1(data)
                files.append({"path": entry["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": oid})
            self._json(200, {"files": files, "commitOid": found[0]})

        def lfs_batch(self, match, query, body) -> None:
            if self._repo(match["kind"], match["repo"]) is None:
                return
            key = f"{match['kind']}/{match['repo']}"
            objects = []
            for obj in json.loads(body)["objects"]:
                entry = {"oid": obj["oid"], "size": obj["size"]}
                if (key, obj["oid"]) not in hub.lfs_objects:
                    entry["actions"] = {"upload": {"href": f"{hub.endpoint}/_lfs/{key}/{obj['oid']}/{obj['size']}"}}
                objects.append(entry)
            self._json(200, {"transfer": "basic", "objects": objects}, {"Content-Type": "application/vnd.git-lfs+json"})

        def lfs_put(self, match, query, body) -> None:
            oid, size, key = match["oid"], int(match["size"]), f"{match['kind']}/{match['repo']}"
            if len(body) != size or hashlib.sha256(body).hexdigest() != oid:
                return self._error(400, f"object {oid} is incomplete: got {len(body)} of {size} bytes")
            with hub.lock:
                hub.lfs_objects[(key, oid)] = body
                hub.lfs_puts[(key, oid)] = hub.lfs_puts.get((key, oid), 0) + 1
            self._send(200)

        def commit(self, match, query, body) -> None:
            repo = self._repo(match["kind"], match["repo"])
            if repo is None:
                return
            branch = match["rev"]
            lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
            header = lines[0]["value"]
            with hub.lock:
                if branch not in repo.branches:
                    return self._error(404, f"Invalid rev id: {branch}")
                head = repo.branches[branch]
                if header.get("parentCommit") and header["parentCommit"] != head:
                    return self._error(412, "A commit has happened since. Please refresh and try again.")
                files = dict(repo.commits[head]["files"])
                for line in lines[1:]:
                    key, value = line["key"], line["value"]
                    if key == "file":
                        files[value["path"]] = (base64.b64decode(value["content"]), False)
                    elif key == "lfsFile":
                        stored = hub.lfs_objects.get((f"{match['kind']}/{match['repo']}", value["oid"]))
                        if stored is None:
                            return self._error(422, f"LFS object {value['oid']} was never uploaded to this repo")
                        files[value["path"]] = (stored, True)
                    elif key == "deletedFile":
                        files.pop(value["path"], None)
                    elif key == "deletedFolder":
                        prefix = value["path"].rstrip("/") + "/"
                        files = {p: v for p, v in files.items() if not p.startswith(prefix)}
                oid = hub.new_commit(repo, branch, files, header["summary"])
            kind = match["kind"]
            self._json(200, {"success": True, "commitOid": oid, "commitUrl": f"{hub.endpoint}/{kind}/{match['repo']}/commit/{oid}"})

        def info(self, match, query, body) -> None:
            repo = self._repo(match["kind"], match["repo"])
            if repo is None:
                return
            found = self._commit(repo, match["rev"] or "main")
            if found is None:
                return
            oid, commit = found
            self._json(200, {
                "_id": match["repo"], "id": match["repo"], "author": match["repo"].split("/")[0], "sha": oid,
                "private": repo.private, "disabled": False, "gated": False, "downloads": 0, "likes": 0, "tags": [],
                "lastModified": "2026-01-01T00:00:00.000Z", "createdAt": "2026-01-01T00:00:00.000Z",
                "siblings": [{"rfilename": path} for path in sorted(commit["files"])],
            })

        def _entry(self, path: str, data: bytes, is_lfs: bool) -> dict:
            if not is_lfs:
                return {"type": "file", "path": path, "oid": git_blob_sha1(data), "size": len(data)}
            sha256 = hashlib.sha256(data).hexdigest()
            pointer = lfs_pointer(sha256, len(data))
            return {"type": "file", "path": path, "oid": git_blob_sha1(pointer), "size": len(data),
                    "lfs": {"oid": sha256, "size": len(data), "pointerSize": len(pointer)}}

        def _listing(self, files: dict, folder: str, recursive: bool) -> list[dict]:
            prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
            entries, folders = [], set()
            for path in sorted(files):
                if not path.startswith(prefix):
                    continue
                rest = path[len(prefix):]
                parts = rest.split("/")
                for depth in range(1, len(parts) if recursive else min(2, len(parts))):
                    folders.add(prefix + "/".join(parts[:depth]))
                if recursive or len(parts) == 1:
                    entries.append(self._entry(path, *files[path]))
            dirs = [{"type": "directory", "path": d, "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0} for d in sorted(folders)]
            return dirs + entries

        def tree(self, match, query, body) -> None:
            found = self._repo_commit(match)
            if found is None:
                return
            files = found[1]["files"]
            folder = (match["path"] or "").strip("/")
            if folder and folder in files:
                return self._error(400, f"{folder} is a file")
            if folder and not any(p.startswith(folder + "/") for p in files):
                return self._json(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            self._json(200, self._listing(files, folder, recursive))

        def paths_info(self, match, query, body) -> None:
            found = self._repo_commit(match)
            if found is None:
                return
            files = found[1]["files"]
            content_type = self.headers.get("Content-Type", "")
            if "json" in content_type:
                paths = json.loads(body)["paths"]
            else:
                paths = parse_qs(body.decode()).get("paths", [])
            result = []
            for raw in paths:
                path = raw.strip("/")
                if path in files:
                    result.append(self._entry(path, *files[path]))
                elif any(p.startswith(path + "/") for p in files) or path == "":
                    result.append({"type": "directory", "path": path, "oid": hashlib.sha1(path.encode()).hexdigest(), "size": 0})
            self._json(200, result)

        def resolve(self, match, query, body, head: bool = False) -> None:
            found = self._repo_commit(match)
            if found is None:
                return
            oid, commit = found
            path = match["path"]
            if path not in commit["files"]:
                return self._json(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
            data, is_lfs = commit["files"][path]
            etag = hashlib.sha256(data).hexdigest() if is_lfs else git_blob_sha1(data)
            headers = {"X-Repo-Commit": oid, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
            if is_lfs:
                headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data))})
            status = 200
            if (ranges := self.headers.get("Range")) and not head:
                start_s, end_s = ranges.removeprefix("bytes=").split("-")
                start = int(start_s) if start_s else max(0, len(data) - int(end_s))
                end = int(end_s) if (end_s and start_s) else len(data) - 1
                headers["Content-Range"] = f"bytes {start}-{min(end, len(data) - 1)}/{len(data)}"
                data, status = data[start:end + 1], 206
            self._send(status, data, headers, head=head)

        def resolve_head(self, match, query, body) -> None:
            self.resolve(match, query, body, head=True)

    repo_re = r"(?P<kind>datasets|models|spaces)/(?P<repo>[^/]+/[^/]+)"
    api_repo = r"/api/" + repo_re
    ROUTES = [
        (("POST", r"/api/repos/create"), Handler.create_repo),
        (("POST", r"/api/validate-yaml"), Handler.validate_yaml),
        (("POST", api_repo + r"/branch/(?P<branch>[^/]+)"), Handler.create_branch),
        (("POST", api_repo + r"/preupload/(?P<rev>[^/]+)"), Handler.preupload),
        (("POST", api_repo + r"/commit/(?P<rev>[^/]+)"), Handler.commit),
        (("POST", api_repo + r"/paths-info/(?P<rev>[^/]+)"), Handler.paths_info),
        (("GET", api_repo + r"(?:/revision/(?P<rev>[^/]+))?"), Handler.info),
        (("GET", api_repo + r"/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?"), Handler.tree),
        (("POST", r"/" + repo_re + r"\.git/info/lfs/objects/batch"), Handler.lfs_batch),
        (("PUT", r"/_lfs/" + repo_re + r"/(?P<oid>[0-9a-f]{64})/(?P<size>\d+)"), Handler.lfs_put),
        (("GET", r"/" + repo_re + r"/resolve/(?P<rev>[^/]+)/(?P<path>.+)"), Handler.resolve),
        (("HEAD", r"/" + repo_re + r"/resolve/(?P<rev>[^/]+)/(?P<path>.+)"), Handler.resolve_head),
    ]
    return Handler
