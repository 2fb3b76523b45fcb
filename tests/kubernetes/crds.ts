// The two custom resources deploy/kubernetes uses, transcribed from their Go
// API types (fields only; defaults and CEL rules are the controllers'). What
// they embed, a PodTemplateSpec and a JobTemplateSpec, comes from
// kubernetes-models, i.e. Kubernetes' own OpenAPI schema, and validate.mjs
// also checks those parts at run time.
import type { IIoK8sApimachineryPkgApisMetaV1ObjectMeta as ObjectMeta } from "@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta";
import type { IPodTemplateSpec } from "kubernetes-models/v1/PodTemplateSpec";
import type { IJobTemplateSpec } from "kubernetes-models/batch/v1/JobTemplateSpec";

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
