"""The workload view's shape: the contract every policy's JMESPath is written against.

Views are plain dicts at run time (JMESPath reads dicts); these TypedDicts only describe them,
so they cost nothing. Each key carries its meaning as `Annotated[type, "meaning"]`; the
reference docs/workload-view.md is generated from them (`python -m kubegap_lint.workloads.viewtypes
> docs/workload-view.md`, or scripts/regenerate.sh) and tests/test_viewtypes.py checks that
every key a built view has is declared here and every declared key is built.

The facts are not declared here: the registry (facts/registry.py) holds each with its level,
type and meaning, and `fields_of` adds them to the workload's, pods' and containers' keys. The
shapes of their records (Spread, Elastic, ...) are declared here; a fact's type names them.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Annotated, Any, TypedDict

Raw = dict[str, Any]  # a parsed manifest node as written (findings on it point at its line)
KeyPaths = dict[str, Any]  # where the manifest nodes a view or record stands for are (below)


class PodBudget(TypedDict):
    """A PodDisruptionBudget in the input whose selector matches a pod template's labels."""

    name: Annotated[str | None, "the budget's name"]
    min_available: Annotated[Any, "`spec.minAvailable` as written (an int, a percentage, or null)"]
    max_unavailable: Annotated[Any, "`spec.maxUnavailable` as written (an int, a percentage, or null)"]
    path: Annotated[str, "the file the budget is in"]
    line: Annotated[int | None, "the line the budget starts at"]


class WorkloadBudget(PodBudget):
    """(fact) A PodDisruptionBudget that selects any pod of the workload."""

    pods: Annotated[int | None, "how many of this workload's pods it selects; null when unknown"]
    selects_gpu_pods: Annotated[bool, "one of the pods it selects requests an accelerator"]
    disruptions_allowed: Annotated[
        int | None, "for that many healthy pods (ints and percentages rounded up as the disruption"
                    " controller does); 0 means the budget blocks every drain; null when unknown"]


class Elastic(TypedDict):
    """(fact) An elastic launch: a PyTorchJob `elasticPolicy`, an ElasticJob, or torchrun with
    `--nnodes MIN:MAX` or a `c10d`/`etcd` rendezvous (flags read from commands and `bash -c`
    scripts, or `PET_NNODES`/`PET_RDZV_BACKEND`)."""

    source: Annotated[str, "`elasticPolicy`, `kind` or `torchrun`"]
    min_nodes: Annotated[int | None, "the fewest nodes the launch runs on"]
    max_nodes: Annotated[int | None, "the most nodes the launch runs on"]
    max_restarts: Annotated[
        int | None, "the effective restart budget: `--max-restarts`/`--max_restarts` before"
                    " `PET_MAX_RESTARTS` before `elasticPolicy.maxRestarts`, 0 when none is set"
                    " (torchrun's default), null when set to an unrendered value"]


class Spread(TypedDict):
    """(fact) The topology keys a template's pods are spread over. A constraint counts only if
    its selector may select the template's own pods: a missing selector selects nothing, a
    requirement that contradicts a template label fails, and a requirement on a label the
    template does not show (one a controller adds, such as `leaderworkerset.sigs.k8s.io/name`)
    is given the benefit of the doubt."""

    hard: Annotated[list[str], "`topologySpreadConstraints` with `whenUnsatisfiable: DoNotSchedule`"
                               " (the default) and required pod anti-affinity"]
    soft: Annotated[list[str], "`ScheduleAnyway` constraints and preferred pod anti-affinity"]


class Mount(TypedDict):
    """A container's volume mount, with the volume it mounts."""

    name: Annotated[Any, "the mount's `name`"]
    path: Annotated[str, "its `mountPath` (empty when missing)"]
    volume_type: Annotated[
        str | None, "the volume's source key: `persistentVolumeClaim`, `emptyDir`, `csi`,"
                    " `hostPath`, ..., or `volumeClaimTemplate`; null when the volume is not found"]
    volume: Annotated[Raw | None, "the pod's volume of that name"]
    medium: Annotated[Any, "the `emptyDir` medium (`Memory`), if any"]
    mount: Annotated[Raw, "the raw volume mount"]
    key_paths: Annotated[KeyPaths, "`.` and `mount`: the mount item; `volume`: the volume (null when not found)"]


# `from` and `class` are Python keywords: keys named so are declared in TypedDict's functional
# form, as the base of the class that holds the rest.
_LocationKeys = TypedDict("_LocationKeys", {
    "path": Annotated[str, "the path"],
    "from": Annotated[str, "`volumeMounts`, `command`, `args` or `env NAME`"],
})


class Location(_LocationKeys):
    """A location a container names: a mount path, or an absolute path (starting with one `/`)
    in its `command`, its `args` (`bash -c` scripts included) or a literal env value. URLs
    such as `gs://b/ckpt` are not paths. Built by `container_locations()`; KG202 and KG203
    match it against `checkpoint_path_patterns` (as words: `path_names_any`)."""

    covered: Annotated[bool, "a mount covers it"]
    mount_path: Annotated[str | None, "the covering mount's path (the longest directory prefix)"]
    volume_type: Annotated[str | None, "the covering mount's `volume_type`"]
    node: Annotated[Any, "the manifest node that names it"]
    key_paths: Annotated[KeyPaths, "`.`: the `mountPath`, the `command` or `args` item, or the env `value` that names it,"
                                   " where findings point"]


_EnvRecordKeys = TypedDict("_EnvRecordKeys", {
    "name": Annotated[str, "the variable"],
    "value": Annotated["str | None", "its value; null when set but unknown"],
    "entry": Annotated["Raw | None", "the raw env entry, or null when the command or a ConfigMap sets it"],
    "from": Annotated[str, "`env`, or `command or envFrom`"],
})


class EnvRecord(_EnvRecordKeys):
    """One variable a container sets (`env`, `envFrom`, or its command line), so a policy can
    check names one by one (KG305) and point at the entry."""

    role: Annotated[str, "the pod's role"]
    container: Annotated[Any, "the container's name"]
    container_node: Annotated[Raw, "the raw container"]
    path: Annotated[str, "where the variable sits (`...containers[0].env.NAME`)"]
    key_paths: Annotated[KeyPaths, "`.` and `entry`: the env entry (the container when there is none);"
                                   " `container_node`: the container"]


class AcceleratorMismatch(TypedDict):
    """(fact) An accelerator resource (`param('gpu_resources')`) in `requests` without a limit or
    with a different limit. Unrendered values are not compared; DRA claims are not resources
    and never appear."""

    name: Annotated[str, "the resource name"]
    request: Annotated[Any, "the request as written"]
    limit: Annotated[Any, "the limit as written; null when missing"]
    key_paths: Annotated[KeyPaths, "`.`: the request"]


class ContainerView(TypedDict):
    """A container (each entry of a pod's `containers` and `init_containers`)."""

    name: Annotated[Any, "the container's name"]
    index: Annotated[int, "its position in the list"]
    path: Annotated[str, "where it sits in the resource (`spec.template.spec.containers[0]`)"]
    init: Annotated[bool, "an init container"]
    sidecar: Annotated[bool, "a native sidecar: an init container with `restartPolicy: Always`, counted with the main containers"]
    role: Annotated[str, "the pod's role"]
    image: Annotated[Any, "the image as written"]
    env: Annotated[
        dict[str, str | None],
        "name to value (env list, then `envFrom` ConfigMaps in the input, then variables a command"
        " sets with `export X=1`, `X=1 cmd` or `mpirun -x X=1`); null when set but unknown"
        " (`valueFrom`, `$(VAR)`)"]
    env_entries: Annotated[dict[str, Raw], "name to the raw env entry, for locating a finding on it"]
    command_line: Annotated[str, "command and args joined"]
    words: Annotated[list[str], "the command line split shell-like"]
    launchers: Annotated[list[str], "launchers found in the command line (`torchrun`, `deepspeed`, ...)"]
    accelerators: Annotated[dict[str, int | None], "accelerator resource name (or `dra:CLASS`) to count"]
    gpus: Annotated[int | None, "accelerators of the container (of a DRA claim, the requests it names, else"
                                " all); null when unknown"]
    mounts: Annotated[list[Mount], "each volume mount"]
    raw: Annotated[Raw, "the raw container"]
    key_paths: Annotated[KeyPaths, "`.` and `raw`: the container item; `env_entries`: name to the env entry's path"]


_WorkloadKeys = TypedDict("_WorkloadKeys", {
    "kind": Annotated[str, "from the resource"],
    "apiVersion": Annotated["str | None", "from the resource"],
    "name": Annotated["str | None", "from the resource"],
    "namespace": Annotated["str | None", "from the resource"],
    "class": Annotated[str, "`training`, `serving` or `other`, from the table (for a kind that only holds whole"
                            " resources, theirs when they share one), else from the shape of a kind it does not"
                            " know (`other` when the shape does not decide; below);"
                            " `diagnostic` when every GPU pod is diagnostic (below)"],
})


class WorkloadSummary(_WorkloadKeys):
    """The workload's scalar fields (a pod's `workload`; the workload view has them too)."""

    training: Annotated[bool, "the class is `training`"]
    serving: Annotated[bool, "the class is `serving`"]
    replicas: Annotated[
        int | None, "the workload's replica count: `spec.replicas` for most serving kinds,"
                    " LeaderWorkerSet groups, the worker groups of a RayService, the most replicas of"
                    " one GPU role for kinds whose roles scale apart (Dynamo components, RBG roles, AIBrix"
                    " StormService roles times its RoleSets); for a serving kind classified by its shape,"
                    " the most pods one GPU template makes (times the `replicas` of each mapping above its own, as a Seldon predictor's);"
                    " else the pods of all templates; null when unknown"]
    pods_total: Annotated[int | None, "pods of all templates, CPU launchers and Ray heads included (Trainer's dataset"
                                      " and model initializers, which finish before training starts, are not);"
                                      " null when a count is unknown (an unrendered `$N`)"]
    gpus_total: Annotated[int | None, "accelerators of all pods; null when unknown"]
    has_gpu: Annotated[bool, "a pod template requests an accelerator (`param('gpu_resources')`, or a DRA"
                             " claim in the input whose device class is in `param('gpu_device_classes')`)"]
    nccl_gpu: Annotated[bool, "one of them is an NVIDIA or AMD GPU (`param('nccl_gpu_resources')`, GPU DRA claims)"]
    multi_pod: Annotated[bool | None, "`pods_total > 1`; null when unknown"]
    distributed_pytorch: Annotated[
        bool, "PyTorchJob, ElasticJob or HyperPodPyTorchJob kind, a Trainer runtime (or a TrainJob's runtime in"
              " the input) whose `mlPolicy` names `torch`, or a launcher in a command (`torchrun`,"
              " `torch.distributed.run`/`launch`, `accelerate launch`, `deepspeed`), or `MASTER_ADDR`,"
              " `WORLD_SIZE` or `PET_*` env; and more than one pod or GPU (or an unknown count)"]
    launchers: Annotated[list[str], "the launchers found in commands"]
    diagnostic: Annotated[bool, "every GPU pod only runs a diagnostic or idles (below); KG108, KG401, KG405 and KG407 skip it"]
    found_by: Annotated[str, "the table entry that read the resource (`table:apps/Deployment`), or `walk`"]
    class_from: Annotated[str | None, "where the class comes from: `table`; `shape` for a kind the table does not"
                                      " know whose fields decide it (below); null when they do not (class `other`:"
                                      " KG008 names the rules that did not judge it)"]
    class_sign: Annotated[str | None, "for `class_from: shape`, the field that decided (`spec.backoffLimit`,"
                                      " `spec.replicas`); else null"]
    runtime: Annotated[Any, "a TrainJob merged with its runtime: `kind`, `name`, and `max_restarts`, its JobSet"
                            " template's `failurePolicy.maxRestarts` as written (null: unset); else null"]
    runtime_missing: Annotated[Any, "a TrainJob whose runtime is not in the input: `kind`, `name` (KG008 says"
                                    " which rules did not judge it); else null"]
    unrendered_counts: Annotated[list[Any], "counts that are unrendered placeholders (`$N`, `${N}`, `__N__`,"
                                            " `replaced-by-...`): `field` (view path), `value`, `node`; KG008"
                                            " names the rules each silenced"]
    torch_backend: Annotated[str | None, "the process-group backend every GPU pod chooses explicitly"
                                         " (`--backend gloo`), else null; KG301-KG304 skip `gloo`"]


class _PodOptional(TypedDict, total=False):
    runtime: Annotated[Any, "merged TrainJob pods only: the runtime (`kind`, `name`) the pod was merged with"]


# `class` is a Python keyword: declared the functional way.
_PodKeys = TypedDict("_PodKeys", {
    "class": Annotated[str, "`diagnostic` when the pod is diagnostic, else its embedded resource's class (an"
                            " AppWrapper component), else the workload's table class"],
})


class PodView(_PodKeys, _PodOptional):
    """A pod template (each entry of `pods`)."""

    role: Annotated[str, "the replica type (`Worker`), group or job name, or `pod` for single-template kinds"]
    label: Annotated[str, "`Worker pods`, or `pods` for single-template kinds; for messages"]
    gpus_text: Annotated[str, "`8 GPUs`, `4 google.com/tpu`; for messages"]
    path: Annotated[str, "where the template sits in the resource (`spec.pytorchReplicaSpecs.Worker.template`)"]
    replicas: Annotated[int | None, "pods made from this template (JobSet: replicas x parallelism); null when unknown"]
    gpus: Annotated[int | None, "accelerators per pod (sum over containers, init containers excluded; a DRA"
                                " claim's devices once, however many containers share them); null when unknown"]
    has_gpu: Annotated[bool, "a container requests an accelerator"]
    found_by: Annotated[str, "`table:...` or `walk` (above); `table:trainer.kubeflow.org/TrainJob+runtime` for merged pods"]
    embedded: Annotated[Any, "for a resource held in another (Katib's trialSpec, an AppWrapper component): `path`,"
                             " `kind`, `class` and `replicas` (its own replica paths; null without) of the inner"
                             " resource; else null"]
    diagnostic: Annotated[bool, "every container (native sidecars too) only runs a diagnostic or idles"]
    follows: Annotated[bool, "every container only serves another pod (an MPI worker's `sshd`, or an MPIJob"
                             " worker with no command and no args, which its operator gives one): the pod is"
                             " diagnostic when the other pods are"]
    nccl_gpu: Annotated[bool, "one of them is an NVIDIA or AMD GPU"]
    accelerators: Annotated[dict[str, int | None], "accelerator resource name (or `dra:CLASS`) to count,"
                                                   " over the containers"]
    partial: Annotated[bool, "the pod spec is completed elsewhere (TrainJob's runtime, an Argo template): volume"
                             " rules skip it"]
    metadata: Annotated[Raw, "the template's metadata"]
    labels: Annotated[Raw, "the template's labels"]
    annotations: Annotated[Raw, "the template's annotations"]
    spec: Annotated[Raw, "the raw pod spec"]
    containers: Annotated[list[ContainerView], "the containers"]
    init_containers: Annotated[list[ContainerView], "the init containers"]
    volumes: Annotated[dict[str, Raw], "the pod's volumes by name"]
    env: Annotated[dict[str, str | None], "merged env of the containers: name to value, null when set but unknown"]
    commands: Annotated[list[str], "each container's command and args joined (empty ones left out)"]
    text: Annotated[str, "commands and known env values, for scans such as object-store URLs"]
    launchers: Annotated[list[str], "launchers found in the commands"]
    budgets: Annotated[list[PodBudget], "PodDisruptionBudgets in the input whose selector matches the template labels"]
    workload: Annotated[WorkloadSummary, "the workload's scalar fields"]
    key_paths: Annotated[KeyPaths, "`.`: the template (or inline pod spec); `spec`, `metadata`, `labels`,"
                                   " `annotations`; `volumes`: name to the volume item's path"]


class WorkloadView(WorkloadSummary):
    """The workload: what a policy's expressions are evaluated against."""

    labels: Annotated[Raw, "from the resource"]
    annotations: Annotated[Raw, "from the resource"]
    pods: Annotated[list[PodView], "one entry per pod template"]
    claim_templates: Annotated[list[Any], "the workload's `volumeClaimTemplates`"]
    resource: Annotated[Raw, "the raw resource"]
    key_paths: Annotated[KeyPaths, "`.` and `resource`: the resource; `labels`, `annotations`"]


# The tables of the reference, in order: (heading, type).
SECTIONS: list[tuple[str, type]] = [
    ("Workload", WorkloadView),
    ("Pod (each entry of `pods`)", PodView),
    ("Container (each entry of a pod's `containers` and `init_containers`)", ContainerView),
    ("Mount (each entry of a container's `mounts`)", Mount),
    ("Location (each entry of a container's `locations`)", Location),
    ("Env record (each entry of a container's `env_list`)", EnvRecord),
    ("Accelerator mismatch (each entry of a container's `accelerator_mismatches`)", AcceleratorMismatch),
    ("Pod budget (each entry of a pod's `budgets`)", PodBudget),
    ("Workload budget (each entry of the workload's `budgets`)", WorkloadBudget),
    ("Spread (a pod's `spread`)", Spread),
    ("Elastic (the workload's `elastic`, when not null)", Elastic),
]


def fields_of(typed: type) -> dict[str, tuple[Any, str]]:
    """Every key of a view type, in declaration order (bases first), then the registry's facts
    of its level: its type and meaning ("(fact) ..." for a fact)."""
    from kubegap_lint.workloads.facts import FACTS

    hints = typing.get_type_hints(typed, include_extras=True)
    found = {key: typing.get_args(hint)[:2] for key, hint in hints.items()}
    level = {WorkloadView: "workload", PodView: "pod", ContainerView: "container"}.get(typed)
    for fact in FACTS.values():
        if fact.level == level:
            found[fact.name] = (eval(fact.type, globals()), f"(fact) {fact.doc}")  # noqa: S307 - the registry's own text
    return found


def _type_text(hint: Any) -> str:
    """A type as the reference shows it: JSON-ish names, view types by name."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return "any"
    if hint is type(None):
        return "null"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(a) for a in args)
    if origin is list:
        return f"list of {_type_text(args[0])}"
    if origin is dict:
        return "object" if args[1] is Any else f"object of {_type_text(args[1])}"
    names = {str: "string", int: "int", bool: "bool"}
    if hint in names:
        return names[hint]
    short = {typed: heading.split(" (")[0] for heading, typed in SECTIONS}
    return short.get(hint, getattr(hint, "__name__", str(hint)))


PREAMBLE = """\
# The workload view

<!-- Generated from kubegap_lint/workloads/viewtypes.py by scripts/regenerate.sh; do not edit. -->

Policies never see raw kinds. Every resource that holds pod templates becomes one *workload
view*, and a policy's JMESPath expressions are evaluated against it. One policy therefore covers
a Deployment, a PyTorchJob, a JobSet and a LeaderWorkerSet alike.

## Discovery

What finds the pod templates is a walk of each document (`kubegap_lint/workloads/discover.py`),
not the table: any mapping, at any depth, that is a pod template (its `spec` has a `containers`
list of mappings) or a pod spec written inline (a `containers` list of mappings, one with
`image` or `resources`) is a pod. The walk does not enter what it found.

The workload table (`policies/workloads.yaml`, extended by a configuration's `workloads:`) only
adds meaning for the kinds it knows: the class, where the counts are and how they multiply, the
role names, and merge rules (a TrainJob with its runtime, below), or what an operator adds to
the pod it builds (an NVIDIA Dynamo component's main container gets its `resources`, `envs`, PVC
mounts and the /dev/shm of `sharedMemory` / `sharedMemorySize`: `workloads/dynamo.py`; a Ray
group's Ray container gets KubeRay's memory /dev/shm: `workloads/kuberay.py`). A
known kind's templates are read through its entry; any other template the walk finds in it (a
KServe transformer) is added beside them. A kind the table does not know is a workload whose
templates are all walked: each counts a sibling `replicas` (else 1), and its role is the
nearest key that is not `template` or `spec` (a list entry's `name`). Such a workload gets every
rule that needs neither a class nor a count (KG501, KG503, the NCCL rules that read env, ...).

Its class comes from its shape where the shape decides (`kubegap_lint/workloads/shape.py`; the
table always wins). Pods that run to completion show in the controller's own fields:
`completions`, `completionMode`, `backoffLimit`, `backoffLimitPerIndex`,
`ttlSecondsAfterFinished`, `activeDeadlineSeconds`, `runPolicy`, `successPolicy`, a cron
`schedule`, a training operator's `*ReplicaSpecs`, or a `restartPolicy` of `Never`, `OnFailure`
or `ExitCode` (on a replica spec or in a pod template): class `training`. Without any, a
`replicas` field (a controller that keeps copies running) makes it `serving`, whose `replicas`
is the most pods one GPU template makes (times the `replicas` of each mapping above the one
holding it: copies of a role, a Seldon predictor's), not the sum of its roles. `metadata`, `status` and what a pod spec holds (its
containers, volumes) are not read; a field written beside an inline pod spec is, but the pod's
own `activeDeadlineSeconds`. `class_from` says `shape` and `class_sign` the field that
decided; findings on it carry `class_from: {by: shape, class, field}` in the JSON output. With none of these fields the class
is `other`, and a GPU workload gets one KG008 note naming its kind and the rules that judge only
training or serving workloads.

Some kinds hold whole resources (Katib's `trialTemplate.trialSpec`, each Kueue AppWrapper
component's `template`): each is read by its own kind's entry, and a kind that holds only
resources takes their class when they share one (an AppWrapper of a Deployment is serving, of a
PyTorchJob training; of both, `other`, each pod keeping its resource's class). Some name one
container the pod is built around elsewhere (a TrainJob's `trainer`, an Argo Workflow
template's `container`, `script` or `containerSet`): the table reads it, the pod is `partial`
(the rules that judge a whole pod spec skip it), and an Argo template's pod count is unknown
(the steps or DAG tasks that call it decide).

Every pod says what found it (`found_by`): `table:<group>/<Kind>` (`table:<group>/<version>/<Kind>`
for a versioned entry such as MPIJob `kubeflow.org/v1alpha1`) or `walk`; findings carry it into
the JSON output (`found_by`).

Every view, and every record derived from the manifest (`mounts`, `locations`, `env_list`,
`accelerator_mismatches` entries), carries `key_paths`: `"."` is the key path in the document
of the node it stands for (the resource, the pod template, the container item, the mount, the
args item or env value naming a location, the request), and other keys give the paths of the
fields taken from the manifest (`spec`, `metadata`, `volumes`, `raw`, `env_entries`...). A path
is a list of mapping keys and list indexes from the document's root (a List's items start with
`"items", n`). A TrainJob's pods merged with its runtime stand, everywhere inside them, for the
TrainJob's override of their job, else its `spec.trainer`. Policies do not read them; `at:`
expressions are located through them, and a raw manifest node a fact holds is found in the
document (docs/writing-policies.md). `object` is a raw manifest node as written.

Fields marked *(fact)* are resilience facts, one registered function each in
`kubegap_lint/workloads/facts/` (the rows below are generated from that registry), added to
every view once it is built, for questions that JMESPath cannot answer cleanly (it has no
variables, no parent reference and no arithmetic). Policies decide what a fact means; the facts
only read the manifest.
"""


APPENDIX = """\
## The diagnostic class

A GPU smoke test is not training. A pod is diagnostic when every container (native sidecars
too) only runs programs of `param('diagnostic_commands')` (globs on the program's file name;
default `sleep`, `nvidia-smi`, `clinfo`, `rocm-smi`, `rocminfo`, `dcgmi`, nccl-tests' `*_perf`,
`nvbandwidth`, and the CUDA samples `deviceQuery`, `vectorAdd`, `nbody`), shell glue around them
(`echo`, `export`, `grep`, a `while` loop), or the idle `tail -f /dev/null`; `bash -c` scripts
are read command by command, and `mpirun`/`srun`/`timeout` decide by what they run. Without a
`command`, the args decide when they start with such a program, else the image's name does
(`.../sleep:v0.0.3`, `cuda-sample:nbody-...`). A real training command (torchrun, python,
accelerate, deepspeed, `mpirun python train.py`, a script file) keeps the pod what its kind
says; so does a container whose entrypoint the manifest does not show. MPI workers that only
run `sshd`, and MPIJob workers that set no command and no args (the MPI operator then runs
`sshd` or `sleep` in them), are diagnostic when the launcher is. The checkpoint rules
(KG201-KG203) skip diagnostic pods, and the rules about how training is placed and restarted
(KG108, KG401, KG405, KG407) skip a workload whose GPU pods all are; every other rule still
applies. A configuration extends the list under `params:`.

## A TrainJob with its runtime

A Kubeflow Trainer TrainJob (`merge: trainer-runtime` in the table) whose (Cluster)TrainingRuntime
is in the input is judged merged (`kubegap_lint/workloads/trainjob.py`): its pods are the
runtime's replicated jobs, the trainer job (labelled `trainer.kubeflow.org/trainjob-ancestor-step:
trainer`, else `node`) runs `numNodes` pods (the TrainJob's, else the runtime's `mlPolicy`) whose
`node` container takes the trainer's image, command, args, env and `resourcesPerNode`, and
`podTemplateOverrides`, `podSpecOverrides` and `runtimePatches` add their volumes, mounts, env
and pod fields to their target jobs. A finding points at the TrainJob's override of that job when
there is one, else at its `spec.trainer`, and its label names both the TrainJob and the runtime.
Without the runtime, the TrainJob is one `partial` pod that the pod-spec rules skip, and KG008
says once which rules did not judge it.
"""


NAMES_INTRO = """
## What `needs:` and `at:` can name

A policy's `needs:` lists what it cannot judge a workload without. When the view lacks one, the
rule is silent on that workload and KG008 says so once. The names are the registry's
(`NEEDS` in `kubegap_lint/workloads/facts/registry.py`; the policy schema allows exactly these):

"""

AT_INTRO = """
An `at:` expression points at a manifest node: a record below that carries `key_paths` (at its
`.` entry), a raw manifest node such a record holds, or a field of one (its path is the node's
and the key, present or missing), or a mapping or list of the manifest that a fact holds (found
in the document itself). Which `at:` wins is in docs/writing-policies.md (*Where a finding
points*).

"""


def _is_raw(hint: Any) -> bool:
    """A raw manifest node (`Raw`, or `Raw | None`): what a finding may point at by the node itself."""
    return hint == Raw or typing.get_origin(hint) in (typing.Union, types.UnionType) and Raw in typing.get_args(hint)


def render_names_markdown() -> str:
    """What a policy's `needs:` may name (the registry's NEEDS) and what its `at:` may point at
    (the records that carry `key_paths`, and the raw manifest nodes each view type holds)."""
    from kubegap_lint.workloads.facts.registry import NEEDS

    parts = [NAMES_INTRO, "| `needs:` | what the rule needs | lacking when the workload's |\n|---|---|---|\n"]
    parts += [f"| `{need.name}` | {need.doc} | `{need.lacking}` is set |\n" for need in NEEDS.values()]
    parts += [AT_INTRO, "| record | where it points (`key_paths`) | raw manifest nodes it holds |\n|---|---|---|\n"]
    for heading, typed in SECTIONS:
        fields = fields_of(typed)
        paths = fields.get("key_paths")
        raw = ", ".join(f"`{key}`" for key, (hint, _) in fields.items() if key != "key_paths" and _is_raw(hint))
        if paths is not None or raw:
            parts.append(f"| {heading.split(' (')[0]} | {paths[1] if paths else 'none of its own'} | {raw or '-'} |\n")
    return "".join(parts)


def render_view_markdown() -> str:
    from kubegap_lint.workloads.kinds import render_kinds_markdown

    parts = [PREAMBLE]
    for heading, typed in SECTIONS:
        parts.append(f"\n## {heading}\n\n{' '.join((typed.__doc__ or '').split())}\n\n| field | type | meaning |\n|---|---|---|\n")
        for key, (hint, meaning) in fields_of(typed).items():
            fact = meaning.startswith("(fact) ")
            text = meaning[len("(fact) "):] if fact else meaning
            parts.append(f"| `{key}` | {_type_text(hint)} | {'*(fact)* ' if fact else ''}{text} |\n")
    parts += [render_kinds_markdown(), render_names_markdown(), "\n" + APPENDIX]
    return "".join(parts)


if __name__ == "__main__":
    sys.stdout.write(render_view_markdown())
