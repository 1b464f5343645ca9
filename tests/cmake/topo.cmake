# Topology tests (label topo): GPU choice, cpuset and NUMA node per rank on
# hwloc XML fixtures with fake GPUs, so they run on machines without GPUs.
# topo_probe checks the library directly (gr_ctx_placement); the cli_* scripts
# check `gpureduce --topo` and skip until the CLI offers it.

set(GR_TOPO_DIR ${GR_TEST_DIR}/topo)

gr_test_exe(topo_probe SOURCES ${GR_TOPO_DIR}/topo_probe.c LIBS PkgConfig::HWLOC)

# Bus ids of the fixtures, in PCI order (see tests/topo/gen_fixtures.py).
set(GR_DGX8_GPUS "0000:07:00.0,0000:0f:00.0,0000:47:00.0,0000:4e:00.0,0000:87:00.0,0000:90:00.0,0000:b7:00.0,0000:bd:00.0")
set(GR_EPYC4_GPUS "0000:01:00.0,0000:41:00.0,0000:81:00.0,0000:c1:00.0")
set(GR_H200_GPUS "0000:18:00.0,0000:2a:00.0")
set(GR_SMALL2_GPUS "0000:3b:00.0,0000:d8:00.0")
set(GR_DGX8_S0 "0-7,16-23")
set(GR_DGX8_S1 "8-15,24-31")

# gr_topo_test(NAME NP n XML fixture GPUS list [ARGS probe args...] [ENV k=v...])
function(gr_topo_test name)
  cmake_parse_arguments(A "" "NP;XML;GPUS" "ARGS;ENV" ${ARGN})
  set(env "GR_TOPOLOGY_XML=${GR_TOPO_DIR}/${A_XML}.xml")
  if(A_GPUS)
    list(APPEND env "GR_FAKE_GPUS=${A_GPUS}")
  endif()
  gr_add_mpi_test(${name} NP ${A_NP} TIMEOUT 60
    COMMAND $<TARGET_FILE:topo_probe> ${A_ARGS}
    LABELS topo ENV ${env} ${A_ENV})
endfunction()

# Take the first n entries of a comma list (ranks 0..n-1 of a plain run).
function(gr_topo_head out list n)
  string(REPLACE "," ";" l "${list}")
  list(SUBLIST l 0 ${n} l)
  string(REPLACE ";" "," l "${l}")
  set(${out} "${l}" PARENT_SCOPE)
endfunction()

# --- 2 sockets, 8 GPUs: np 1..8, local rank i -> i-th GPU in PCI order ------
set(gpus_cuda "0,1,2,3,4,5,6,7")
set(numa "0,0,0,0,1,1,1,1")
set(cpusets "${GR_DGX8_S0}/${GR_DGX8_S0}/${GR_DGX8_S0}/${GR_DGX8_S0}/${GR_DGX8_S1}/${GR_DGX8_S1}/${GR_DGX8_S1}/${GR_DGX8_S1}")
foreach(np RANGE 1 8)
  gr_topo_head(g "${gpus_cuda}" ${np})
  gr_topo_head(p "${GR_DGX8_GPUS}" ${np})
  gr_topo_head(n "${numa}" ${np})
  gr_topo_test(topo_dgx8_np${np} NP ${np} XML dgx8 GPUS ${GR_DGX8_GPUS}
    ARGS --expect-gpu ${g} --expect-pci ${p} --expect-numa ${n} --expect-cpuset ${cpusets}
         --expect-local-rank 0,1,2,3,4,5,6,7 --expect-bound "cpu+mem by gpureduce (--bind gpu), simulated"
         --expect-choice "PCI bus order")
endforeach()

# CUDA order differs from PCI order (CUDA_DEVICE_ORDER=FASTEST_FIRST): ranks
# still take GPUs in PCI order; `gpu` is the CUDA ordinal of that GPU.
gr_topo_test(topo_dgx8_cuda_order_np8 NP 8 XML dgx8
  GPUS "0000:87:00.0,0000:07:00.0,0000:90:00.0,0000:0f:00.0,0000:b7:00.0,0000:47:00.0,0000:bd:00.0,0000:4e:00.0"
  ARGS --expect-pci ${GR_DGX8_GPUS} --expect-gpu 1,3,5,7,0,2,4,6 --expect-numa ${numa} --expect-cpuset ${cpusets})

# Launcher bound each rank to one core (mpirun --map-by socket --bind-to core
# alternates sockets): each rank takes the nearest free GPU, and its cpuset is
# the GPU's cores intersected with the launcher's core.
gr_topo_test(topo_dgx8_launcher_core_np4 NP 4 XML dgx8 GPUS ${GR_DGX8_GPUS}
  ENV "GR_FAKE_LAUNCHER_CPUSET=8/0/9/1"
  ARGS --expect-pci 0000:87:00.0,0000:07:00.0,0000:90:00.0,0000:0f:00.0 --expect-gpu 4,0,5,1
       --expect-cpuset 8/0/9/1 --expect-numa 1,0,1,0 --expect-choice "nearest free GPU"
       --expect-bound "cpu by launcher, mem by gpureduce (--bind gpu)")

# Launcher packed 8 ranks on socket 0 (--bind-to core --map-by core): the 4
# near GPUs go to ranks 0-3; ranks 4-7 get socket 1's GPUs but keep their
# launcher core, since binding never widens a launcher's mask.
gr_topo_test(topo_dgx8_launcher_packed_np8 NP 8 XML dgx8 GPUS ${GR_DGX8_GPUS}
  ENV "GR_FAKE_LAUNCHER_CPUSET=0/1/2/3/4/5/6/7"
  ARGS --expect-gpu 0,1,2,3,4,5,6,7 --expect-cpuset 0/1/2/3/4/5/6/7 --expect-numa ${numa})

# A scheduler limit narrower than a socket, same for all ranks (e.g. a
# cgroup of 4 cores + their hyperthreads): never widened.
gr_topo_test(topo_dgx8_launcher_limit_np2 NP 2 XML dgx8 GPUS ${GR_DGX8_GPUS}
  ENV "GR_FAKE_LAUNCHER_CPUSET=0-3,16-19"
  ARGS --expect-gpu 0,1 --expect-cpuset 0-3,16-19 --expect-numa 0 --expect-bound "cpu by launcher, mem by gpureduce")

# Launcher mask on socket 1 only, but --bind launcher: keep it as is.
gr_topo_test(topo_dgx8_bind_launcher_np2 NP 2 XML dgx8 GPUS ${GR_DGX8_GPUS}
  ENV "GR_FAKE_LAUNCHER_CPUSET=8-11/12-15"
  ARGS --bind launcher --expect-gpu 4,5 --expect-cpuset 8-11/12-15 --expect-bound "cpu by launcher (--bind launcher)")

# --bind none: the plan is made, nothing is bound, the rank runs anywhere.
gr_topo_test(topo_dgx8_bind_none_np2 NP 2 XML dgx8 GPUS ${GR_DGX8_GPUS}
  ARGS --bind none --expect-gpu 0,1 --expect-cpuset 0-31 --expect-numa 0 --expect-bound "nothing (--bind none)")

# Ranks with fewer choices pick first: rank 1 is bound to a core of socket 0
# (1 near GPU), rank 0 may run anywhere; rank 1 gets socket 0's GPU even
# though rank 0 has the lower local rank.
gr_topo_test(topo_small2_constrained_first_np2 NP 2 XML small2 GPUS ${GR_SMALL2_GPUS}
  ENV "GR_FAKE_LAUNCHER_CPUSET=0-3/0"
  ARGS --expect-gpu 1,0 --expect-pci 0000:d8:00.0,0000:3b:00.0 --expect-cpuset 2-3/0 --expect-numa 1,0
       --expect-choice "PCI bus order|nearest free GPU")

# --- 1 socket in NPS4 mode, 4 GPUs: one NUMA node per GPU -----------------
foreach(np RANGE 1 4)
  gr_topo_head(g "0,1,2,3" ${np})
  gr_topo_head(p "${GR_EPYC4_GPUS}" ${np})
  gr_topo_test(topo_epyc4_np${np} NP ${np} XML epyc4 GPUS ${GR_EPYC4_GPUS}
    ARGS --expect-gpu ${g} --expect-pci ${p} --expect-numa 0,1,2,3 --expect-cpuset 0-3/4-7/8-11/12-15
         --expect-bound "cpu+mem by gpureduce")
endforeach()

# Launcher masks on NUMA nodes 3 and 1 of the one socket: GPUs follow them.
gr_topo_test(topo_epyc4_launcher_np2 NP 2 XML epyc4 GPUS ${GR_EPYC4_GPUS}
  ENV "GR_FAKE_LAUNCHER_CPUSET=12-15/4-5"
  ARGS --expect-gpu 3,1 --expect-pci 0000:c1:00.0,0000:41:00.0 --expect-cpuset 12-15/4-5 --expect-numa 3,1
       --expect-bound "cpu by launcher, mem by gpureduce (--bind gpu)")

# --- 2 GPUs on one NUMA node (the H200 pair) -------------------------------
foreach(np RANGE 1 2)
  gr_topo_head(p "${GR_H200_GPUS}" ${np})
  gr_topo_test(topo_h200pair_np${np} NP ${np} XML h200pair GPUS ${GR_H200_GPUS}
    ARGS --expect-gpu 0,1 --expect-pci ${p} --expect-numa 0 --expect-cpuset 0-15 --expect-choice "PCI bus order"
         --expect-bound "mem by gpureduce (--bind gpu")
endforeach()

# --- More ranks than GPUs ----------------------------------------------------
gr_topo_test(topo_small2_np4_too_many NP 4 XML small2 GPUS ${GR_SMALL2_GPUS}
  ARGS --expect-error GR_ERR_TOO_MANY_RANKS)
gr_topo_test(topo_small2_np4_share NP 4 XML small2 GPUS ${GR_SMALL2_GPUS}
  ARGS --share-gpus --expect-gpu 0,1,0,1 --expect-pci 0000:3b:00.0,0000:d8:00.0,0000:3b:00.0,0000:d8:00.0
       --expect-cpuset 0-1/2-3/0-1/2-3 --expect-numa 0,1,0,1 --expect-choice "shared by 2 ranks (--share-gpus")
gr_topo_test(topo_h200pair_np3_too_many NP 3 XML h200pair GPUS ${GR_H200_GPUS}
  ARGS --expect-error GR_ERR_TOO_MANY_RANKS)
gr_topo_test(topo_dgx8_np8_share_np8 NP 8 XML dgx8 GPUS "0000:07:00.0,0000:87:00.0"
  ARGS --share-gpus --expect-gpu 0,1,0,1,0,1,0,1 --expect-numa 0,1,0,1,0,1,0,1)

# --- Errors ---------------------------------------------------------------
gr_topo_test(topo_err_busid_not_found NP 2 XML dgx8 GPUS "0000:07:00.0,0000:99:00.0"
  ARGS --expect-error GR_ERR_TOPOLOGY)
gr_topo_test(topo_err_busid_syntax NP 1 XML dgx8 GPUS "0000:07:00.0,gpu1"
  ARGS --expect-error GR_ERR_INVALID_ARG)
gr_topo_test(topo_err_xml_missing NP 2 XML does-not-exist GPUS ${GR_DGX8_GPUS}
  ARGS --expect-error GR_ERR_TOPOLOGY)
gr_topo_test(topo_err_xml_broken NP 2 XML broken GPUS ${GR_DGX8_GPUS}
  ARGS --expect-error GR_ERR_TOPOLOGY)
gr_topo_test(topo_err_fake_launcher NP 2 XML dgx8 GPUS ${GR_DGX8_GPUS}
  ENV "GR_FAKE_LAUNCHER_CPUSET=99"
  ARGS --expect-error GR_ERR_INVALID_ARG)

# --- Scripts: messages, per-rank environments, the real machine, the CLI ----
foreach(script
    errors          # error messages and exit status
    single_gpu      # one visible GPU per rank (CUDA_VISIBLE_DEVICES / --gpus-per-task=1)
    local_rank      # node-local rank from the launcher's environment, or not
    debug_log       # GR_DEBUG=info logs the decisions
    real_machine    # no topology file: real hwloc_get_cpubind / set_cpubind / set_membind
    cli_topo)       # gpureduce --topo [--format json] (skips until the CLI has --topo)
  gr_add_script_test(topo_${script} ${GR_TOPO_DIR}/${script}.sh LABELS topo TIMEOUT 180
    ENV "TOPO_PROBE=$<TARGET_FILE:topo_probe>;TOPO_DIR=${GR_TOPO_DIR}")
endforeach()
