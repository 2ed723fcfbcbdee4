//! Code generation from `src/ffi/mpi_functions.tbl` (see the table's header for
//! its syntax). One parsed table produces both the Rust wrappers and the C
//! redirect header, so the two can never disagree.

use std::fmt::Write;

/// How a redirected function is implemented; mirrors the table's kinds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Local,
    P2p,
    P2pStart,
    Coll,
    CollStart,
    CommNew,
    /// Communicates, but MPIFT simulates no failures for it (windows, files,
    /// request-based RMA): refused on a revoked communicator or one with a known
    /// failure, otherwise passed through.
    NoFt,
    Custom,
}

impl Kind {
    fn parse(word: &str) -> Result<Kind, String> {
        Ok(match word {
            "local" => Kind::Local,
            "p2p" => Kind::P2p,
            "p2p_start" => Kind::P2pStart,
            "coll" => Kind::Coll,
            "coll_start" => Kind::CollStart,
            "comm_new" => Kind::CommNew,
            "noft" => Kind::NoFt,
            "custom" => Kind::Custom,
            other => return Err(format!("unknown kind `{other}`")),
        })
    }
    /// The `crate::engine::registry::req_state::Kind` variant the generated body passes on.
    fn hook_variant(self) -> &'static str {
        match self {
            Kind::Local => "Local",
            Kind::P2p => "P2p",
            Kind::P2pStart => "P2pStart",
            Kind::Coll => "Coll",
            Kind::CollStart => "CollStart",
            Kind::CommNew => "CommNew",
            Kind::NoFt | Kind::Custom => unreachable!("no generic hook for this kind"),
        }
    }
    fn describe(self) -> &'static str {
        match self {
            Kind::Local => "local operation (no communication; allowed on a revoked communicator)",
            Kind::P2p => "blocking point-to-point operation",
            Kind::P2pStart => "non-blocking or persistent point-to-point start; the request is an MPIFT request",
            Kind::Coll => "blocking collective operation",
            Kind::CollStart => "non-blocking collective start; the request is an MPIFT request",
            Kind::CommNew => "collective that creates a communicator; the new handle is an MPIFT communicator",
            Kind::NoFt => "passed through to the real MPI (no simulated failures; refused on a revoked communicator or one with a known failure); requests are MPIFT requests",
            Kind::Custom => "implemented by MPIFT",
        }
    }
}

/// One C parameter, normalised.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    /// Base type name, e.g. `int`, `MPI_Comm`.
    pub base: String,
    pub is_const: bool,
    /// Pointer depth (`[]` counts as one).
    pub depth: usize,
}

impl Param {
    fn parse(text: &str) -> Result<Param, String> {
        let mut t = text.trim().to_string();
        let mut depth = 0;
        if t.ends_with("[]") {
            depth += 1;
            t.truncate(t.len() - 2);
        }
        let t = t.replace('*', " * ");
        let mut words: Vec<&str> = t.split_whitespace().collect();
        let name = words.pop().ok_or_else(|| format!("empty parameter in `{text}`"))?;
        let mut is_const = false;
        let mut base = None;
        for w in words {
            match w {
                "const" => is_const = true,
                "*" => depth += 1,
                w if base.is_none() => base = Some(w.to_string()),
                w => return Err(format!("unexpected `{w}` in parameter `{text}`")),
            }
        }
        let base = base.ok_or_else(|| format!("no type in parameter `{text}`"))?;
        Ok(Param { name: name.to_string(), base, is_const, depth })
    }

    /// Rust type of this parameter in the exported wrapper.
    pub fn rust_type(&self) -> String {
        let base = match self.base.as_str() {
            "int" => "c_int",
            "char" => "c_char",
            "void" => "c_void",
            "MPI_Comm" => "Sim_FT_MPI_Comm",
            "MPI_Request" => "Sim_FT_MPI_Request",
            other => other,
        };
        let mut ty = base.to_string();
        for level in 0..self.depth {
            let qual = if self.is_const && level == 0 { "*const " } else { "*mut " };
            ty = format!("{qual}{ty}");
        }
        ty
    }

    fn is_comm_in(&self) -> bool {
        self.base == "MPI_Comm" && self.depth == 0
    }
    fn is_comm_out(&self) -> bool {
        self.base == "MPI_Comm" && self.depth == 1
    }
    fn is_request_out(&self) -> bool {
        self.base == "MPI_Request" && self.depth == 1
    }
}

/// C return types a table line may have besides `int` (handle conversions, which
/// return a value instead of an error code; `custom` only), with their Rust type.
const VALUE_RETURNS: [(&str, &str); 3] =
    [("MPI_Fint", "MPI_Fint"), ("MPI_Comm", "Sim_FT_MPI_Comm"), ("MPI_Request", "Sim_FT_MPI_Request")];

/// One table line.
#[derive(Clone, Debug)]
pub struct Function {
    pub kind: Kind,
    /// C return type: `int` (an MPI error code) or one of [`VALUE_RETURNS`].
    pub ret: String,
    pub name: String,
    pub params: Vec<Param>,
    pub rust_path: Option<String>,
    pub aliases: Vec<String>,
    /// May be called before `MPI_Init` / after `MPI_Finalize`.
    pub preinit: bool,
    /// `noft` with a communicator argument whose errors belong to another object
    /// (`MPI_File_open`: the file error handler): the real return code is returned
    /// as is, because the real MPI already applied that object's handler.
    pub objerr: bool,
    /// `coll`/`comm_new` whose describer also describes intercommunicators
    /// (`MPI_Intercomm_merge`): the generated code does not make it opaque there.
    pub inter: bool,
    /// A `custom` line's calm lane (`lane crate::engine::entry::lane::x`): called with
    /// the C arguments first, by `boundary::run_lane` (src/engine/entry/lane.rs).
    pub lane: Option<String>,
    /// A `custom` line whose hand-written path calls the host's function itself
    /// (`host`): it too gets its host call in `transport::generated`.
    pub host: bool,
}

pub fn parse_table(text: &str) -> Result<Vec<Function>, String> {
    let mut out = Vec::new();
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f = parse_line(line).map_err(|e| format!("mpi_functions.tbl:{}: {e}", lineno + 1))?;
        out.push(f);
    }
    Ok(out)
}

fn parse_line(line: &str) -> Result<Function, String> {
    let (kind_word, rest) = line.split_once(char::is_whitespace).ok_or("missing prototype")?;
    let kind = Kind::parse(kind_word)?;
    // The prototype ends at its last `)`; `=> path` and flags follow it.
    let end = rest.rfind(')').ok_or("missing `)`")?;
    let (proto, tail) = (rest[..=end].trim(), rest[end + 1..].trim());
    let open = proto.find('(').ok_or("missing `(`")?;
    let close = proto.len() - 1;
    let head: Vec<&str> = proto[..open].split_whitespace().collect();
    if head.len() != 2 || !(head[0] == "int" || VALUE_RETURNS.iter().any(|(c, _)| *c == head[0])) {
        return Err(format!("expected `int NAME(...)`, got `{}`", &proto[..open]));
    }
    let ret = head[0].to_string();
    let name = head[1].to_string();
    let inner = proto[open + 1..close].trim();
    let params = if inner == "void" || inner.is_empty() {
        Vec::new()
    } else {
        inner.split(',').map(Param::parse).collect::<Result<Vec<_>, _>>()?
    };
    let mut words = tail.split_whitespace();
    let mut rust_path = None;
    let mut aliases = Vec::new();
    let mut preinit = false;
    let mut objerr = false;
    let mut inter = false;
    let mut lane = None;
    let mut host = false;
    while let Some(w) = words.next() {
        match w {
            "=>" => {}
            "lane" => lane = Some(words.next().ok_or("`lane` needs a Rust path")?.to_string()),
            "alias" => aliases.push(words.next().ok_or("`alias` needs a name")?.to_string()),
            "preinit" => preinit = true,
            "objerr" => objerr = true,
            "inter" => inter = true,
            "host" => host = true,
            p if rust_path.is_none() && p.starts_with("crate::") => rust_path = Some(p.to_string()),
            other => return Err(format!("unexpected `{other}` after the prototype")),
        }
    }
    if kind == Kind::Custom && rust_path.is_none() {
        return Err("`custom` lines name a Rust path after `=>`".into());
    }
    if rust_path.is_some() && !matches!(kind, Kind::Custom | Kind::Coll) {
        return Err("only `custom` and `coll` lines name a Rust path after `=>`".into());
    }
    if !matches!(kind, Kind::Custom | Kind::NoFt) && !params.iter().any(Param::is_comm_in) {
        return Err("generic kinds need an MPI_Comm argument".into());
    }
    if ret != "int" && kind != Kind::Custom {
        return Err(format!("only `custom` lines may return `{ret}`"));
    }
    if objerr && kind != Kind::NoFt {
        return Err("`objerr` applies to `noft` lines only".into());
    }
    if inter && !matches!(kind, Kind::Coll | Kind::CommNew) {
        return Err("`inter` applies to `coll` and `comm_new` lines only".into());
    }
    if lane.is_some() && (kind != Kind::Custom || preinit || ret != "int") {
        return Err("`lane` applies to `custom` lines returning int, not `preinit`".into());
    }
    if host && (kind != Kind::Custom || ret != "int") {
        return Err("`host` applies to `custom` lines returning int (the other kinds have their host call)".into());
    }
    Ok(Function { kind, ret, name, params, rust_path, aliases, preinit, objerr, inter, lane, host })
}

/// Rust source of every wrapper, `include!`d by `src/ffi/generated.rs` and read
/// by cbindgen for the header.
pub fn rust_wrappers(funcs: &[Function]) -> String {
    let mut s = String::new();
    s.push_str("// @generated by build.rs from src/ffi/mpi_functions.tbl. Do not edit.\n\n");
    for f in funcs {
        let sig: Vec<String> =
            f.params.iter().map(|p| format!("{}: {}", p.name, p.rust_type())).collect();
        let _ = writeln!(s, "/// Redirected `{}`: {}.", f.name, f.kind.describe());
        if !f.aliases.is_empty() {
            let _ = writeln!(s, "/// Also reached as `{}`.", f.aliases.join("`, `"));
        }
        let _ = writeln!(s, "#[no_mangle]");
        let ret = VALUE_RETURNS.iter().find(|(c, _)| *c == f.ret).map_or("c_int", |(_, r)| r);
        let _ = writeln!(
            s,
            "pub unsafe extern \"C\" fn Sim_FT_{}({}) -> {ret} {{",
            f.name,
            sig.join(", ")
        );
        let raw = f.kind == Kind::NoFt && (f.objerr || !f.params.iter().any(Param::is_comm_in));
        let runner = if f.ret != "int" {
            "value"
        } else if raw {
            "run_raw"
        } else if f.preinit {
            "run_any"
        } else {
            "run"
        };
        match lane_closure(f) {
            Some(lane) => {
                let _ = writeln!(s, "    boundary::run_lane(\"{}\", {}, {lane}, move || {{", f.name, dump_args(f));
            }
            None if runner == "run" => {
                let _ = writeln!(s, "    boundary::run(\"{}\", move || {{", f.name);
                // A collective's entry hook gives its communicator to the dump
                // (engine::entry::hooks::coll_enter): no check in its wrapper.
                if !matches!(f.kind, Kind::Coll | Kind::CollStart) {
                    let _ = writeln!(s, "        boundary::note_args({});", dump_args(f));
                }
            }
            None => {
                let _ = writeln!(s, "    boundary::{runner}(\"{}\", move || {{", f.name);
            }
        }
        if f.kind == Kind::NoFt {
            noft_body(&mut s, f, raw);
        } else if f.kind == Kind::Custom {
            let args: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
            let _ = writeln!(s, "        {}({})", f.rust_path.as_ref().unwrap(), args.join(", "));
        } else {
            generic_body(&mut s, f);
        }
        s.push_str("    })\n}\n\n");
    }
    s
}

/// The closure that gives a call's arguments to the state dump
/// (src/inject/dump.rs), read only when tracing: the communicator, the peer
/// (`source`, `dest`, `root`), the tag, the requests of a wait or test, and a
/// constructor's new communicator, found by their names in the table.
fn dump_args(f: &Function) -> String {
    let named = |n: &str| f.params.iter().find(|p| p.name == n && p.depth == 0).map(|p| p.name.clone());
    let mut fields = Vec::new();
    if let Some(c) = f.params.iter().find(|p| p.is_comm_in()) {
        fields.push(format!("comm: {}", c.name));
    }
    for (field, names) in [("source", ["source", "source"]), ("dest", ["dest", "dest"]), ("root", ["root", "root"]), ("tag", ["tag", "recvtag"])] {
        if let Some(n) = named(names[0]).or_else(|| named(names[1])) {
            fields.push(format!("{field}: Some({n})"));
        }
    }
    let waits = (f.name.starts_with("MPI_Wait") || f.name.starts_with("MPI_Test")) && f.name != "MPI_Test_cancelled";
    if let Some(r) = f.params.iter().find(|p| waits && p.base == "MPI_Request" && p.depth == 1) {
        let n = named("count").or_else(|| named("incount")).unwrap_or_else(|| "1".into());
        fields.push(format!("requests: {} as *const _, nreq: {n}", r.name));
    }
    if let Some(o) = f.params.iter().find(|p| p.is_comm_out()) {
        fields.push(format!("newcomm: {}", o.name));
    }
    if fields.is_empty() {
        return "move || crate::inject::dump::Args::NONE".into();
    }
    format!("move || crate::inject::dump::Args {{ {}, ..crate::inject::dump::Args::NONE }}", fields.join(", "))
}

/// The calm lane of a wrapper (src/engine/entry/lane.rs), as a closure for
/// `boundary::run_lane`: non-persistent point-to-point starts on one
/// communicator. A send takes it only while no bit-flip policy is on (the
/// general body may send a corrupted copy).
fn lane_closure(f: &Function) -> Option<String> {
    if let Some(lane) = &f.lane {
        let args: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
        return Some(format!("|| {lane}({})", args.join(", ")));
    }
    let peer = f.params.iter().find(|p| p.name == "dest" || p.name == "source")?.name.clone();
    let request = f.params.iter().find(|p| p.is_request_out())?.name.clone();
    let comms: Vec<&Param> = f.params.iter().filter(|p| p.is_comm_in()).collect();
    if f.kind != Kind::P2pStart || f.name.ends_with("_init") || comms.len() != 1 {
        return None;
    }
    let comm = comms[0].name.clone();
    let args: Vec<String> = f
        .params
        .iter()
        .map(|p| {
            if p.is_comm_in() {
                "c".to_string()
            } else if p.is_request_out() {
                "r".to_string()
            } else if p.depth > 0 {
                format!("{} as _", p.name)
            } else {
                p.name.clone()
            }
        })
        .collect();
    let send = peer == "dest";
    let start = format!(
        "crate::engine::entry::lane::p2p_start({comm}, {peer}, {send}, {request}, |c, r| transport::generated::{}({}))",
        f.name,
        args.join(", ")
    );
    Some(if send { format!("|| if crate::inject::bitflip::idle() {{ {start} }} else {{ None }}") } else { format!("|| {start}") })
}

/// `MPI_X` -> `MPI_Ix`: the MPI-3 non-blocking form of a blocking collective.
fn nonblocking_twin(name: &str) -> String {
    let rest = &name["MPI_".len()..];
    let mut chars = rest.chars();
    let first = chars.next().unwrap().to_ascii_lowercase();
    format!("MPI_I{first}{}", chars.as_str())
}

/// The module that holds the describer of `name`: the topology ones (names
/// containing `eighbor_`: the neighborhood collectives; `raph_create`: the graph
/// constructors) are in `engine::colls::describe_topo`, every other in `engine::colls::describe`.
fn describer_path(name: &str) -> &'static str {
    if name.contains("eighbor_") || name.contains("raph_create") {
        "crate::engine::colls::describe_topo"
    } else {
        "crate::engine::colls::describe"
    }
}

/// For a blocking collective: under `MPIFT_COLLECTIVES=nonblocking`, its
/// non-blocking form (same descriptor with the NB flag, so dead ranks and revoke
/// catch-ups join the same form) and MPIFT's wait (engine::entry::hooks::coll_wait).
fn nonblocking_branch(s: &mut String, f: &Function, first_comm: &str, dargs: &[String]) {
    let twin = nonblocking_twin(&f.name);
    let mut args = real_args(f);
    args.push("&mut nb_request".to_string());
    let _ = writeln!(s, "        if crate::engine::base::settings::nonblocking_colls() {{");
    let _ = writeln!(
        s,
        "            let desc = crate::engine::colls::describe::unless_inter(&{first_comm}_r, || {}::{twin}({}));",
        describer_path(&twin),
        dargs.join(", ")
    );
    let _ = writeln!(s, "            hooks::coll_enter(&{first_comm}_r, &desc)?;");
    let _ = writeln!(s, "            let mut nb_request = transport::request_null();");
    let _ = writeln!(s, "            let rc = transport::generated::{twin}({});", args.join(", "));
    // No buffers: a revoke may release it at once (req_state::ReqState::buffers).
    let bufferless = !has_buffers(f);
    let _ = writeln!(s, "            return hooks::coll_wait(&{first_comm}_r, rc, nb_request, {bufferless});");
    let _ = writeln!(s, "        }}");
}

/// The host call a generated wrapper makes, as a function of `transport`: the
/// wrapper's parameters with MPIFT's handles replaced by the host's.
fn host_param_type(p: &Param) -> String {
    let ty = p.rust_type();
    ty.replace("Sim_FT_MPI_Comm", "MPI_Comm").replace("Sim_FT_MPI_Request", "MPI_Request")
}

fn host_fn(s: &mut String, name: &str, params: &[(String, String, bool)], wrapper: &str) {
    let sig: Vec<String> = params.iter().map(|(n, ty, _)| format!("{n}: {ty}")).collect();
    let args: Vec<String> = params.iter().map(|(n, _, ptr)| if *ptr { format!("{n} as _") } else { n.clone() }).collect();
    let started = params.iter().any(|(_, ty, _)| ty == "*mut MPI_Request");
    let until = if started {
        "until the request it makes completes (a persistent one's: until it is freed)"
    } else {
        "for the call"
    };
    let _ = writeln!(s, "/// The host's `{name}` (for `Sim_FT_{wrapper}`, and for MPIFT's own callers).");
    let _ = writeln!(s, "///");
    let _ = writeln!(s, "/// # Safety");
    let _ = writeln!(s, "/// The arguments meet what the MPI standard asks of `{name}`'s: every");
    let _ = writeln!(s, "/// pointer is valid for what the host reads or writes through it (as the");
    let _ = writeln!(s, "/// counts, displacements and datatypes beside it describe, where significant)");
    let _ = writeln!(s, "/// {until},");
    let _ = writeln!(s, "/// and every handle is the host's. `Sim_FT_{wrapper}` passes the program's");
    let _ = writeln!(s, "/// arguments on, its communicators and requests replaced by their host handles;");
    let _ = writeln!(s, "/// MPIFT's own callers (a dead rank's joins with their dummy buffers, the");
    let _ = writeln!(s, "/// engine's and the injector's collectives) say at each call why theirs do.");
    let _ = writeln!(s, "#[inline]");
    let _ = writeln!(s, "pub unsafe fn {name}({}) -> c_int {{", sig.join(", "));
    let _ = writeln!(s, "    mpi::{name}({})", args.join(", "));
    let _ = writeln!(s, "}}\n");
}

/// `transport::generated`: one host call per table line whose wrapper calls the
/// host (and each `custom` line marked `host`, whose hand-written path calls it),
/// and the non-blocking twins of blocking collectives
/// (`MPIFT_COLLECTIVES=nonblocking`). Only these functions call the host for the
/// generated wrappers, so the rule "only transport calls the host" holds for
/// generated code too; MPIFT's engine calls the same ones (a dead rank's joins).
pub fn transport_calls(funcs: &[Function]) -> String {
    let mut s = String::new();
    s.push_str("// @generated by build.rs from src/ffi/mpi_functions.tbl. Do not edit.\n\n");
    let with_host = |f: &&Function| f.kind != Kind::Custom || f.host;
    let hosted: Vec<&str> = funcs.iter().filter(with_host).map(|f| f.name.as_str()).collect();
    for f in funcs.iter().filter(with_host) {
        let mut params: Vec<(String, String, bool)> =
            f.params.iter().map(|p| (p.name.clone(), host_param_type(p), p.depth > 0)).collect();
        host_fn(&mut s, &f.name, &params, &f.name);
        if f.kind == Kind::Coll && !hosted.contains(&nonblocking_twin(&f.name).as_str()) {
            params.push(("request".to_string(), "*mut MPI_Request".to_string(), true));
            host_fn(&mut s, &nonblocking_twin(&f.name), &params, &f.name);
        }
    }
    s
}

/// The real call's arguments: real communicators, `&mut` the real outputs
/// (`<name>_r`), pointers cast to the real prototype's types.
fn real_args(f: &Function) -> Vec<String> {
    f.params
        .iter()
        .map(|p| {
            if p.is_comm_in() {
                format!("{}_r.real", p.name)
            } else if p.is_comm_out() || p.is_request_out() {
                format!("&mut {}_r", p.name)
            } else if p.depth > 0 {
                format!("{} as _", p.name)
            } else {
                p.name.clone()
            }
        })
        .collect()
}

/// A collective with a buffer (any pointer argument but communicators and the
/// request): its revoked request is waited for until MPI is done with it
/// (req_state::ReqState::buffers).
fn has_buffers(f: &Function) -> bool {
    f.params.iter().any(|p| p.depth > 0 && !p.is_comm_in() && !p.is_comm_out() && !p.is_request_out())
}

/// Converts the handle parameters of a generic call (comm in, comm out, request out).
fn convert_params(s: &mut String, f: &Function, first_comm: &str) {
    for p in &f.params {
        if p.is_comm_in() {
            let conv = if p.name == first_comm { "comm_arg" } else { "comm_arg_or_null" };
            let _ = writeln!(s, "        let {0}_r = args::{conv}({0})?;", p.name);
        } else if p.is_comm_out() {
            let _ = writeln!(s, "        crate::engine::base::errors::check_out_ptr({0}, &{1}_r)?;", p.name, first_comm);
            let _ = writeln!(s, "        let mut {}_r = transport::comm_null();", p.name);
        } else if p.is_request_out() {
            let _ = writeln!(s, "        crate::engine::base::errors::check_out_ptr({0}, &{1}_r)?;", p.name, first_comm);
            let _ = writeln!(s, "        let mut {}_r = transport::request_null();", p.name);
        }
    }
}

fn generic_body(s: &mut String, f: &Function) {
    let first_comm = f.params.iter().find(|p| p.is_comm_in()).unwrap().name.clone();
    let peer = f.params.iter().find(|p| p.name == "dest" || p.name == "source").map(|p| p.name.clone());
    // A started send (not a persistent one): counted for the dead-rank protocol,
    // and possibly sent from a corrupted copy (MPIFT_BITFLIP, src/inject/bitflip.rs)
    // that the request keeps alive. Its checks, start hook and count are one call
    // (hooks::send_arg: one registry lookup when nothing is going on).
    let persistent = f.kind == Kind::P2pStart && f.name.ends_with("_init");
    let started_send = f.kind == Kind::P2pStart && peer.as_deref() == Some("dest") && !persistent;
    let request_out = f.params.iter().find(|p| p.is_request_out()).map(|p| p.name.clone());
    let fused_send = started_send && f.params.iter().filter(|p| p.is_comm_in()).count() == 1 && request_out.is_some();
    if fused_send {
        let req = request_out.as_deref().unwrap_or_default();
        let _ = writeln!(s, "        let ({first_comm}_r, nth) = hooks::send_arg({first_comm}, dest, {req})?;");
        let _ = writeln!(s, "        let mut {req}_r = transport::request_null();");
    } else {
        convert_params(s, f, &first_comm);
    }
    let collective = matches!(f.kind, Kind::Coll | Kind::CollStart | Kind::CommNew);
    if collective {
        // The descriptor other processes read (src/engine/colls/describe.rs), then the entry hook.
        let mut dargs: Vec<String> = vec![format!("&{first_comm}_r")];
        dargs.extend(f
            .params
            .iter()
            .filter(|p| !p.is_comm_out() && !p.is_request_out() && p.name != first_comm)
            .map(|p| {
                if p.is_comm_in() {
                    format!("{}_r.real", p.name)
                } else if p.depth > 0 {
                    format!("{} as _", p.name)
                } else {
                    p.name.clone()
                }
            }));
        if f.kind == Kind::Coll {
            nonblocking_branch(s, f, &first_comm, &dargs);
        }
        // On an intercommunicator the descriptor is opaque (no dead-rank joins
        // there), unless the describer says otherwise (`inter`).
        let describe = format!("{}::{}({})", describer_path(&f.name), f.name, dargs.join(", "));
        if f.inter {
            let _ = writeln!(s, "        let desc = {describe};");
        } else {
            let _ = writeln!(s, "        let desc = crate::engine::colls::describe::unless_inter(&{first_comm}_r, || {describe});");
        }
        match (&f.rust_path, f.kind) {
            (Some(own), Kind::Coll) => {
                // MPIFT's own algorithm where it applies (None: the host's call below).
                let args: Vec<String> = f.params.iter().filter(|p| p.name != first_comm).map(|p| p.name.clone()).collect();
                let _ = writeln!(s, "        let seq = hooks::coll_enter(&{first_comm}_r, &desc)?;");
                let _ = writeln!(
                    s,
                    "        if let Some(outcome) = {own}(&{first_comm}_r, &desc, seq, {}) {{ return outcome; }}",
                    args.join(", ")
                );
            }
            _ => {
                let _ = writeln!(s, "        hooks::coll_enter(&{first_comm}_r, &desc)?;");
            }
        }
        if f.kind == Kind::CommNew {
            let _ = writeln!(s, "        let child_id = hooks::next_child_id(&{first_comm}_r);");
        }
    } else if !fused_send {
        let _ = writeln!(
            s,
            "        hooks::enter(crate::engine::registry::req_state::Kind::{}, &{first_comm}_r)?;",
            f.kind.hook_variant()
        );
    }
    let corrupts = started_send && ["buf", "count", "datatype", "tag"].iter().all(|n| f.params.iter().any(|p| p.name == *n));
    if started_send && !fused_send {
        let _ = writeln!(s, "        let nth = crate::engine::registry::comm::count_send({first_comm}, dest);");
    }
    if corrupts {
        let _ = writeln!(
            s,
            "        let flip = crate::inject::bitflip::outgoing(\"{}\", buf, count, datatype, tag, {first_comm}_r.real);",
            f.name
        );
        let _ = writeln!(s, "        let buf = flip.buf(buf);");
        let _ = writeln!(s, "        let (count, datatype) = flip.count_type(count, datatype);");
    }
    let _ = writeln!(s, "        let rc = transport::generated::{}({});", f.name, real_args(f).join(", "));
    match f.kind {
        Kind::Coll => {
            let _ = writeln!(s, "        hooks::coll_leave(&{first_comm}_r, rc)?;");
        }
        Kind::CommNew => {
            let outs: Vec<String> =
                f.params.iter().filter(|p| p.is_comm_out()).map(|p| format!("&mut {}_r", p.name)).collect();
            // A failed constructor gives MPI_COMM_NULL (what MPICH's and Open MPI's
            // own constructors do, e.g. when an attribute copy callback fails).
            let nulls: String = f
                .params
                .iter()
                .filter(|p| p.is_comm_out())
                .map(|p| format!(" if !{0}.is_null() {{ *{0} = std::ptr::null_mut(); }}", p.name))
                .collect();
            let _ = writeln!(
                s,
                "        if let Err(failure) = hooks::comm_new_leave(&{first_comm}_r, rc, &mut [{}]) {{{nulls} return Err(failure); }}",
                outs.join(", ")
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "        hooks::leave(crate::engine::registry::req_state::Kind::{}, &{first_comm}_r, rc)?;",
                f.kind.hook_variant()
            );
        }
    }
    for p in &f.params {
        if p.is_comm_out() {
            let _ = writeln!(s, "        *{0} = comm::adopt({0}_r, &{1}_r, child_id);", p.name, first_comm);
        } else if p.is_request_out() {
            match (&peer, f.kind) {
                (Some(peer), Kind::P2pStart) if started_send => {
                    // The adversary's `sends` choice takes the non-blocking standard,
                    // buffered and ready sends (not a synchronous one, which needs its
                    // match, nor a persistent one) that it sees as eager.
                    let eager = if ["MPI_Isend", "MPI_Ibsend", "MPI_Irsend"].contains(&f.name.as_str()) {
                        "crate::engine::adversary::sends::eager(count, datatype)"
                    } else {
                        "false"
                    };
                    let _ = writeln!(s, "        *{0} = request::adopt_send({0}_r, &{1}_r, {2}, nth, {eager});", p.name, first_comm, peer);
                    if corrupts {
                        let _ = writeln!(s, "        request::keep(*{}, flip.into_copy());", p.name);
                    }
                }
                (Some(peer), Kind::P2pStart) => {
                    let _ = writeln!(
                        s,
                        "        *{0} = request::adopt_p2p({0}_r, crate::engine::registry::req_state::Kind::P2pStart, &{1}_r, {2}, {3});",
                        p.name,
                        first_comm,
                        peer,
                        peer == "source"
                    );
                    if corrupts {
                        let _ = writeln!(s, "        request::keep(*{}, flip.into_copy());", p.name);
                    }
                    if persistent {
                        let _ = writeln!(s, "        request::make_persistent(*{});", p.name);
                    }
                }
                (_, Kind::CollStart) => {
                    let _ = writeln!(s, "        *{0} = request::adopt_coll({0}_r, &{1}_r, {2});", p.name, first_comm, has_buffers(f));
                }
                _ => {
                    let _ = writeln!(
                        s,
                        "        *{0} = request::adopt({0}_r, crate::engine::registry::req_state::Kind::{1}, &{2}_r);",
                        p.name,
                        f.kind.hook_variant(),
                        first_comm
                    );
                }
            }
        }
    }
    s.push_str("        Ok(())\n");
}

/// Body of a `noft` wrapper: handles converted, a revoked or failed communicator refused,
/// the real call made, requests wrapped (no communicator: failures are not
/// simulated for them). `raw`: the real return code is the wrapper's.
fn noft_body(s: &mut String, f: &Function, raw: bool) {
    let first_comm = f.params.iter().find(|p| p.is_comm_in()).map(|p| p.name.clone());
    for p in &f.params {
        if p.is_comm_in() {
            let conv = if Some(&p.name) == first_comm.as_ref() { "comm_arg" } else { "comm_arg_or_null" };
            let _ = writeln!(s, "        let {0}_r = args::{conv}({0})?;", p.name);
        } else if p.is_request_out() {
            let _ = writeln!(s, "        if {}.is_null() {{ return Err(request::arg_error()); }}", p.name);
            let _ = writeln!(s, "        let mut {}_r = transport::request_null();", p.name);
        } else if p.is_comm_out() {
            panic!("{}: `noft` functions cannot create communicators", f.name);
        }
    }
    if let Some(c) = &first_comm {
        let _ = writeln!(s, "        hooks::unjoinable_enter(&{c}_r)?;");
    }
    let _ = writeln!(s, "        let rc = transport::generated::{}({});", f.name, real_args(f).join(", "));
    for p in f.params.iter().filter(|p| p.is_request_out()) {
        let _ = writeln!(s, "        *{0} = request::adopt_plain({0}_r);", p.name);
    }
    match (&first_comm, raw) {
        (_, true) => s.push_str("        Ok(rc)\n"),
        (Some(c), false) => {
            let _ = writeln!(s, "        hooks::leave(crate::engine::registry::req_state::Kind::P2p, &{c}_r, rc)");
        }
        (None, false) => unreachable!("no communicator means raw"),
    }
}

/// Callback types and predefined callbacks that mention `MPI_Comm`: a program's
/// functions take MPIFT's handle, so these names must be MPIFT's too.
const CALLBACK_NAMES: [(&str, &str); 13] = [
    ("MPI_Comm_errhandler_function", "Sim_FT_MPI_Comm_errhandler_function"),
    ("MPI_Comm_errhandler_fn", "Sim_FT_MPI_Comm_errhandler_function"),
    ("MPI_Handler_function", "Sim_FT_MPI_Comm_errhandler_function"),
    ("MPI_Comm_copy_attr_function", "Sim_FT_MPI_Comm_copy_attr_function"),
    ("MPI_Comm_delete_attr_function", "Sim_FT_MPI_Comm_delete_attr_function"),
    ("MPI_Copy_function", "Sim_FT_MPI_Comm_copy_attr_function"),
    ("MPI_Delete_function", "Sim_FT_MPI_Comm_delete_attr_function"),
    ("MPI_COMM_NULL_COPY_FN", "Sim_FT_MPI_COMM_NULL_COPY_FN"),
    ("MPI_COMM_DUP_FN", "Sim_FT_MPI_COMM_DUP_FN"),
    ("MPI_COMM_NULL_DELETE_FN", "Sim_FT_MPI_COMM_NULL_DELETE_FN"),
    // The deprecated MPI-1 names of the same three.
    ("MPI_NULL_COPY_FN", "Sim_FT_MPI_COMM_NULL_COPY_FN"),
    ("MPI_DUP_FN", "Sim_FT_MPI_COMM_DUP_FN"),
    ("MPI_NULL_DELETE_FN", "Sim_FT_MPI_COMM_NULL_DELETE_FN"),
];

/// `src/ffi/mpi4_not_covered.tbl`: groups of MPI-4.0 names, each with its reason.
pub fn parse_not_covered(text: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(reason) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            groups.push((reason.to_string(), Vec::new()));
            continue;
        }
        let Some((_, names)) = groups.last_mut() else {
            return Err(format!("mpi4_not_covered.tbl:{}: a name before the first [reason]", n + 1));
        };
        for name in line.split_whitespace() {
            if !name.starts_with("MPI_") || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("mpi4_not_covered.tbl:{}: `{name}` is not an MPI function name", n + 1));
            }
            names.push(name.to_string());
        }
    }
    Ok(groups)
}

/// `include/MPI-FT_redefine.h`.
pub fn redefine_header(funcs: &[Function], not_covered: &[(String, Vec<String>)]) -> String {
    let mut s = String::new();
    s.push_str(
        "/* MPI-FT_redefine.h: redirects the MPI names a program uses to MPIFT.\n\
         \x20* @generated by build.rs from src/ffi/mpi_functions.tbl. Do not edit.\n\
         \x20*\n\
         \x20* Include after MPI-FT.h (or use -I<prefix>/include/compat and keep <mpi.h>).\n\
         \x20* Every name below keeps its MPI meaning; only the implementation changes. */\n\
         #ifndef MPIFT_MPI_FT_REDEFINE_H\n#define MPIFT_MPI_FT_REDEFINE_H\n\n\
         #include \"MPI-FT.h\"\n\n",
    );
    s.push_str("/* Handle types: MPIFT's opaque pointers replace the real MPI handles. */\n");
    for (from, to) in [("MPI_Comm", "Sim_FT_MPI_Comm"), ("MPI_Request", "Sim_FT_MPI_Request")] {
        let _ = writeln!(s, "#undef {from}\n#define {from} {to}");
    }
    s.push_str("\n/* Callback types and predefined callbacks: they see MPIFT's handles. */\n");
    for (from, to) in CALLBACK_NAMES {
        let _ = writeln!(s, "#undef {from}\n#define {from} {to}");
    }
    s.push_str("\n/* Predefined handles (address constants: usable in static initialisers). */\n");
    for (from, to) in [
        ("MPI_COMM_WORLD", "Sim_FT_MPI_COMM_WORLD"),
        ("MPI_COMM_SELF", "Sim_FT_MPI_COMM_SELF"),
        ("MPI_COMM_NULL", "Sim_FT_MPI_COMM_NULL"),
        ("MPI_REQUEST_NULL", "Sim_FT_MPI_REQUEST_NULL"),
    ] {
        let _ = writeln!(s, "#undef {from}\n#define {from} {to}");
    }
    s.push_str("\n/* ULFM error classes, attribute and feature-test macros (Open MPI 5 names). */\n");
    for (from, to) in [
        ("MPI_ERR_PROC_FAILED", "SIM_FT_ERR_PROC_FAILED"),
        ("MPI_ERR_PROC_FAILED_PENDING", "SIM_FT_ERR_PROC_FAILED_PENDING"),
        ("MPI_ERR_REVOKED", "SIM_FT_ERR_REVOKED"),
        ("MPIX_ERR_PROC_FAILED", "SIM_FT_ERR_PROC_FAILED"),
        ("MPIX_ERR_PROC_FAILED_PENDING", "SIM_FT_ERR_PROC_FAILED_PENDING"),
        ("MPIX_ERR_REVOKED", "SIM_FT_ERR_REVOKED"),
        ("MPI_FT", "Sim_FT_MPIX_FT_keyval"),
        ("MPIX_FT", "Sim_FT_MPIX_FT_keyval"),
    ] {
        let _ = writeln!(s, "#undef {from}\n#define {from} {to}");
    }
    s.push_str(
        "/* MPIFT's classes sit above a small host MPI_ERR_LASTCODE (MPI-FT.h): the last\n\
         \x20* predefined code is then the last of them. */\n\
         #if MPIFT_HOST_ERR_LASTCODE < 1000000\n#undef MPI_ERR_LASTCODE\n#define MPI_ERR_LASTCODE SIM_FT_ERR_REVOKED\n#endif\n",
    );
    for m in [
        "OMPI_HAVE_MPI_EXT_FTMPI",
        "OMPI_HAVE_MPIX_COMM_GET_FAILED",
        "OMPI_HAVE_MPIX_COMM_ACK_FAILED",
        "OMPI_HAVE_MPIX_COMM_ISHRINK",
    ] {
        let _ = writeln!(s, "#undef {m}\n#define {m} 1");
    }
    s.push_str(
        "\n/* Functions (one line per table entry; aliases follow their function). A program\n\
         \x20* that calls the profiling name PMPI_X directly reaches the same wrapper: its\n\
         \x20* arguments are MPIFT handles too. */\n",
    );
    for f in funcs {
        for public in std::iter::once(&f.name).chain(f.aliases.iter()) {
            let _ = writeln!(s, "#undef {public}\n#define {public} Sim_FT_{}", f.name);
            let _ = writeln!(s, "#undef P{public}\n#define P{public} Sim_FT_{}", f.name);
        }
    }
    s.push_str(
        "\n/* The MPI version a program sees is the one MPIFT covers: 3.1 (plus ULFM), so a\n\
         \x20* program that tests MPI_VERSION takes its MPI-3.1 path (MPI_Get_version agrees). */\n\
         #if MPI_VERSION > 3 || (MPI_VERSION == 3 && MPI_SUBVERSION > 1)\n\
         #undef MPI_VERSION\n#define MPI_VERSION 3\n#undef MPI_SUBVERSION\n#define MPI_SUBVERSION 1\n\
         #endif\n",
    );
    s.push_str(
        "\n/* MPI-4.0 functions that take MPI_Comm or MPI_Request (src/ffi/mpi4_not_covered.tbl):\n\
         \x20* outside MPIFT's scope. A call would hand MPIFT's handles to the real MPI, so it\n\
         \x20* is a compile error instead, one that names the function (C and C++). */\n",
    );
    for (reason, names) in not_covered {
        let _ = writeln!(s, "/* {reason} */");
        for name in names {
            for public in [name.clone(), format!("P{name}")] {
                let _ = writeln!(
                    s,
                    "#undef {public}\n#define {public}(...) (sizeof(struct MPIFT_error_{public}_is_MPI_4_and_not_covered_by_MPIFT))"
                );
            }
        }
    }
    s.push_str("\n#endif /* MPIFT_MPI_FT_REDEFINE_H */\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pointer_and_array_params() {
        let f = parse_line("p2p int MPI_X(const int a[], void **b, MPI_Comm c)").unwrap();
        assert_eq!(f.params[0].rust_type(), "*const c_int");
        assert_eq!(f.params[1].rust_type(), "*mut *mut c_void");
        assert_eq!(f.params[2].rust_type(), "Sim_FT_MPI_Comm");
    }
}
