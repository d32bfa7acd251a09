/* Can a copy kernel (SMs reading host memory) and the copy engine run at once and beat either's
 * ~51 GB/s over PCIe? 256 MiB pinned (ALLOC_HOST_PTR) <-> device, out-of-order queue, wall time
 * of enqueue..clFinish, best of R. Usage: splitce PLATFORM_SUBSTRING */
#include "probe.h"
#define CK(x) do{cl_int e_=(x); if(e_){printf("%s:%d err %d\n",__FILE__,__LINE__,e_); exit(1);}}while(0)
int main(int argc,char**argv){
  const char*want=argc>1?argv[1]:"vkcl"; cl_device_id d=probe_device(want); cl_int e;
  cl_queue_properties qp[]={CL_QUEUE_PROPERTIES,CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,0};
  cl_context c=clCreateContext(0,1,&d,0,0,&e);
  cl_command_queue q=clCreateCommandQueueWithProperties(c,d,qp,&e); CK(e);
  const char*src="kernel void cp(global const uint4 *s, global uint4 *d, ulong off, ulong n){"
                 " for(ulong i=get_global_id(0); i<n; i+=get_global_size(0)) d[off+i]=s[off+i]; }";
  cl_program pr=clCreateProgramWithSource(c,1,&src,0,&e); CK(clBuildProgram(pr,1,&d,0,0,0));
  cl_kernel k=clCreateKernel(pr,"cp",&e); CK(e);
  size_t N=256u<<20;
  cl_mem pin=clCreateBuffer(c,CL_MEM_READ_WRITE|CL_MEM_ALLOC_HOST_PTR,N,0,&e); CK(e);
  cl_mem dev=clCreateBuffer(c,CL_MEM_READ_WRITE,N,0,&e); CK(e);
  unsigned *h=clEnqueueMapBuffer(q,pin,CL_TRUE,CL_MAP_WRITE,0,N,0,0,0,&e); CK(e);
  for(size_t i=0;i<N/4;i++) h[i]=(unsigned)i*2654435761u;
  CK(clEnqueueUnmapMemObject(q,pin,h,0,0,0)); CK(clFinish(q));
  double fr[]={0,0.05,0.1,0.15,0.2,0.3,0.5,1.0};
  size_t gsz[]={132*1024, 132*2048};
  for(int dir=0;dir<2;dir++){
    cl_mem s=dir?dev:pin, t=dir?pin:dev;
    for(int gi=0;gi<2;gi++)
    for(unsigned fi=0;fi<sizeof fr/sizeof fr[0];fi++){
      if(gi && (fr[fi]==0)) continue;
      size_t kb=((size_t)(N*fr[fi]))&~(size_t)4095, rest=N-kb;
      cl_ulong off=0, n16=kb/16;
      CK(clSetKernelArg(k,0,sizeof s,&s)); CK(clSetKernelArg(k,1,sizeof t,&t));
      CK(clSetKernelArg(k,2,8,&off)); CK(clSetKernelArg(k,3,8,&n16));
      double best=1e9;
      for(int r=0;r<8;r++){
        double t0=now();
        if(kb) CK(clEnqueueNDRangeKernel(q,k,1,0,&gsz[gi],0,0,0,0));
        if(rest) CK(clEnqueueCopyBuffer(q,s,t,kb,kb,rest,0,0,0));
        CK(clFinish(q)); double dt=now()-t0; if(dt<best)best=dt;
      }
      printf("%s %s kernel share %.2f (grid %zu): %.1f GB/s\n",want,dir?"d->h":"h->d",fr[fi],gsz[gi],N/best/1e9);
    }
  }
  /* check the last d->h */
  h=clEnqueueMapBuffer(q,pin,CL_TRUE,CL_MAP_READ,0,N,0,0,0,&e); CK(e);
  for(size_t i=0;i<N/4;i++) if(h[i]!=(unsigned)i*2654435761u){printf("bad at %zu\n",i);break;}
  return 0;}
