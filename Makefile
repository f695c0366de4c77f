# Building and deploying the operator. `make help` lists the targets.
#
#   make image                       static binary + pinned charts -> image (buildah)
#   make bundle IMG=registry/operator@sha256:...   the OLM bundle for that image, and its image
#   make install                     the operator's CRDs onto the current kubectl context
#   make deploy IMG=registry/operator@sha256:...   CRDs, RBAC and the Deployment (kustomize)
#   make undeploy                    everything deploy created (the CRDs last)

IMG ?= localhost/navique-ai-core-operator:dev
BUNDLE_IMG ?= localhost/navique-ai-core-operator-bundle:dev
VERSION ?= $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
KUBECTL ?= kubectl
BUILDAH ?= buildah --storage-driver vfs
TARGET := x86_64-unknown-linux-gnu
# The image profile: release without debug info (Cargo.toml).
BIN := target/$(TARGET)/image/navique-operator
# Where `charts pull` finds the pinned charts: empty for their upstream
# registries, or mirror rules such as
#   CHARTS_FLAGS="--registry-mirror quay.io=127.0.0.1:5000/quay.io --plain-http"
CHARTS_FLAGS ?=
# The image name config/manager/kustomization.yaml starts from.
DEFAULT_IMAGE_NAME := ghcr.io/scigility/navique-ai-core-operator

.PHONY: help static charts image bundle install deploy undeploy

help:
	@sed -n 's/^#   //p' Makefile

static:
	RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" cargo build --profile image --target $(TARGET) --bin navique-operator
	mkdir -p build
	strip -o build/navique-operator $(BIN)

charts: static
	rm -rf build/charts
	build/navique-operator charts pull --dest build/charts $(CHARTS_FLAGS)
	build/navique-operator charts verify build/charts

build/rootfs/etc/passwd:
	mkdir -p build/rootfs/etc
	printf 'root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n' > build/rootfs/etc/passwd
	printf 'root:x:0:\nnonroot:x:65532:\n' > build/rootfs/etc/group
	printf 'hosts: files dns\n' > build/rootfs/etc/nsswitch.conf

image: charts build/rootfs/etc/passwd
	$(BUILDAH) bud --isolation chroot --build-arg VERSION=$(VERSION) -t $(IMG) .

# The OLM bundle for IMG (by digest, for disconnected clusters) into
# build/bundle, and its image.
bundle:
	rm -rf build/bundle && mkdir -p build/bundle
	build/navique-operator manifests --root build/bundle --operator-image $(IMG)
	cd build/bundle && $(BUILDAH) bud --isolation chroot -f bundle.Dockerfile -t $(BUNDLE_IMG) .

install:
	$(KUBECTL) apply --server-side -k config/crd

# An overlay of config/default with IMG (repo:tag or repo@sha256:...).
deploy:
	@mkdir -p build/deploy
	@img='$(IMG)'; case "$$img" in \
	  *@*) name="$${img%@*}"; field="  digest: $${img#*@}";; \
	  *) last="$${img##*/}"; case "$$last" in \
	       *:*) name="$${img%:*}"; field="  newTag: $${img##*:}";; \
	       *) name="$$img"; field="";; esac;; esac; \
	printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../../config/default\nimages:\n- name: %s\n  newName: %s\n%s\n' \
	  "$(DEFAULT_IMAGE_NAME)" "$$name" "$$field" > build/deploy/kustomization.yaml
	$(KUBECTL) apply --server-side -k build/deploy

undeploy:
	$(KUBECTL) delete --ignore-not-found --wait=false -k config/default
