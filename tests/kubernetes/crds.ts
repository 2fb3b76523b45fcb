// The custom resources deploy/kubernetes uses, transcribed from their Go API
// types (fields only; defaults and CEL rules are the controllers'). What they
// embed (a PodTemplateSpec, a JobTemplateSpec, resource requirements,
// environment variables) comes from kubernetes-models, i.e. Kubernetes' own
// OpenAPI schema, and validate.mjs also checks those parts at run time.
import type { IIoK8sApimachineryPkgApisMetaV1ObjectMeta as ObjectMeta } from "@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta";
import type { IPodTemplateSpec } from "kubernetes-models/v1/PodTemplateSpec";
import type { IJobTemplateSpec } from "kubernetes-models/batch/v1/JobTemplateSpec";
import type { IResourceRequirements } from "kubernetes-models/v1/ResourceRequirements";
import type { IEnvVar } from "kubernetes-models/v1/EnvVar";
import type { IVolumeMount } from "kubernetes-models/v1/VolumeMount";
import type { IAffinity } from "kubernetes-models/v1/Affinity";
import type { IToleration } from "kubernetes-models/v1/Toleration";
import type { IPodSecurityContext } from "kubernetes-models/v1/PodSecurityContext";
import type { IVolume } from "kubernetes-models/v1/Volume";
import type { ILocalObjectReference } from "kubernetes-models/v1/LocalObjectReference";
import type { IPodSchedulingGate } from "kubernetes-models/v1/PodSchedulingGate";

type Quantity = number | string;

// kubeflow/training-operator, pkg/apis/kubeflow.org/v1: pytorch_types.go and
// common_types.go (training operator v1.7/v1.8).
export interface IPyTorchJob {
  apiVersion: "kubeflow.org/v1";
  kind: "PyTorchJob";
  metadata?: ObjectMeta;
  spec: {
    runPolicy?: {
      cleanPodPolicy?: "All" | "Running" | "None";
      ttlSecondsAfterFinished?: number;
      activeDeadlineSeconds?: number;
      backoffLimit?: number;
      suspend?: boolean;
      managedBy?: string;
      schedulingPolicy?: {
        minAvailable?: number;
        queue?: string;
        minResources?: { [name: string]: Quantity };
        priorityClass?: string;
        scheduleTimeoutSeconds?: number;
      };
    };
    elasticPolicy?: {
      minReplicas?: number;
      maxReplicas?: number;
      rdzvBackend?: "c10d" | "etcd" | "etcd-v2";
      rdzvPort?: number;
      rdzvHost?: string;
      rdzvId?: string;
      rdzvConf?: { key?: string; value?: string }[];
      standalone?: boolean;
      nProcPerNode?: number;
      maxRestarts?: number;
    };
    pytorchReplicaSpecs: { Master?: ReplicaSpec; Worker?: ReplicaSpec };
    // auto, cpu, gpu or a number, as torchrun's --nproc-per-node.
    nprocPerNode?: string;
  };
}

interface ReplicaSpec {
  replicas?: number;
  template?: IPodTemplateSpec;
  restartPolicy?: "Always" | "OnFailure" | "Never" | "ExitCode";
}

// kubernetes-sigs/jobset, api/jobset/v1alpha2/jobset_types.go.
export interface IJobSet {
  apiVersion: "jobset.x-k8s.io/v1alpha2";
  kind: "JobSet";
  metadata?: ObjectMeta;
  spec: {
    replicatedJobs?: {
      name: string;
      groupName?: string;
      template: IJobTemplateSpec;
      replicas?: number;
      dependsOn?: { name: string; status: "Ready" | "Complete" }[];
    }[];
    network?: { enableDNSHostnames?: boolean; subdomain?: string; publishNotReadyAddresses?: boolean };
    successPolicy?: { operator: "All" | "Any"; targetReplicatedJobs?: string[] };
    failurePolicy?: {
      maxRestarts?: number;
      restartStrategy?: "Recreate" | "BlockingRecreate" | "InPlaceRestart";
      rules?: {
        name: string;
        action: "FailJobSet" | "RestartJobSet" | "RestartJobSetAndIgnoreMaxRestarts" | "RestartJob" | "RestartJobAndIgnoreMaxRestarts";
        onJobFailureReasons?: string[];
        onJobFailureMessagePatterns?: string[];
        targetReplicatedJobs?: string[];
      }[];
    };
    startupPolicy?: { startupPolicyOrder: "AnyOrder" | "InOrder" };
    suspend?: boolean;
    coordinator?: { replicatedJob: string; jobIndex?: number; podIndex?: number };
    managedBy?: string;
    ttlSecondsAfterFinished?: number;
  };
}

// kubeflow/trainer, pkg/apis/trainer/v1alpha1: trainjob_types.go and
// trainingruntime_types.go (Trainer v2).
type IntOrString = number | string;

export interface ITrainJob {
  apiVersion: "trainer.kubeflow.org/v1alpha1";
  kind: "TrainJob";
  metadata?: ObjectMeta;
  spec?: {
    runtimeRef: { name: string; apiGroup?: string; kind?: "TrainingRuntime" | "ClusterTrainingRuntime" };
    initializer?: {
      dataset?: { storageUri?: string; env?: IEnvVar[]; secretRef?: ILocalObjectReference };
      model?: { storageUri?: string; env?: IEnvVar[]; secretRef?: ILocalObjectReference };
    };
    trainer?: {
      image?: string;
      command?: string[];
      args?: string[];
      env?: IEnvVar[];
      numNodes?: number;
      resourcesPerNode?: IResourceRequirements;
      // Torch: auto, cpu, gpu or a number (torchrun's --nproc-per-node).
      numProcPerNode?: IntOrString;
    };
    templateOverrides?: {
      manager: string;
      job?: { time?: string; targetJobs?: { name: string }[]; metadata?: ObjectMeta }[];
      pod?: {
        time?: string;
        targetJobs: { name: string }[];
        metadata?: ObjectMeta;
        spec?: {
          serviceAccountName?: string;
          nodeSelector?: { [key: string]: string };
          affinity?: IAffinity;
          tolerations?: IToleration[];
          securityContext?: IPodSecurityContext;
          volumes?: IVolume[];
          initContainers?: ContainerOverride[];
          containers?: ContainerOverride[];
          schedulingGates?: IPodSchedulingGate[];
          imagePullSecrets?: ILocalObjectReference[];
        };
      }[];
    }[];
    suspend?: boolean;
    managedBy?: "trainer.kubeflow.org/trainjob-controller" | "kueue.x-k8s.io/multikueue";
  };
}

interface ContainerOverride {
  name: string;
  env?: IEnvVar[];
  volumeMounts?: IVolumeMount[];
}

export interface ITrainingRuntime {
  apiVersion: "trainer.kubeflow.org/v1alpha1";
  kind: "TrainingRuntime" | "ClusterTrainingRuntime";
  metadata?: ObjectMeta;
  spec?: {
    mlPolicy?: {
      numNodes?: number;
      torch?: { numProcPerNode?: IntOrString };
      mpi?: {
        numProcPerNode?: number;
        mpiImplementation?: "OpenMPI" | "Intel" | "MPICH" | "";
        sshAuthMountPath?: string;
        runLauncherAsNode?: boolean;
      };
      jax?: Record<string, never>;
    };
    podGroupPolicy?: {
      coscheduling?: { scheduleTimeoutSeconds?: number };
      volcano?: { networkTopology?: { mode?: "hard" | "soft"; highestTierAllowed?: number } };
    };
    // The JobSet that each TrainJob becomes: its name and namespace are the TrainJob's.
    template?: { metadata?: ObjectMeta; spec?: IJobSet["spec"] };
  };
}
